import { BearerToken } from './bearer-token';

describe('BearerToken', () => {
  const token = new BearerToken('admin-token-0123456789', 'admin token');

  it.each([
    'Bearer admin-token-0123456789',
    'bearer admin-token-0123456789',
    'BEARER admin-token-0123456789',
    // RFC 9110 §11.4: credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
    'Bearer   admin-token-0123456789',
  ])('takes %j', (header) => {
    expect(token.refusal([header])).toBeNull();
  });

  it.each([
    'Bearer admin-token-012345678',
    'Bearer\tadmin-token-0123456789',
    'Basic admin-token-0123456789',
    'Bearer admin-token-0123456789 x',
    'Beareradmin-token-0123456789',
  ])('refuses %j as invalid', (header) => {
    expect(token.refusal([header])).toMatchObject({ code: 'api_key_invalid', param: 'Authorization' });
  });

  it('refuses an absent header as missing, and two as repeated', () => {
    expect(token.refusal([])).toMatchObject({ code: 'api_key_missing' });
    expect(token.refusal(['Bearer a', 'Bearer b'])?.message).toMatch(/more than once|twice|2 times/i);
  });
});
