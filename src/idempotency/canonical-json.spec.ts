import { canonicalJson, fingerprint } from './canonical-json';

describe('canonicalJson', () => {
  it('sorts keys at every depth and drops whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('keeps array order, which is meaningful', () => {
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });

  it('escapes strings as JSON does', () => {
    expect(canonicalJson({ 'k"ey': 'va\nl€' })).toBe('{"k\\"ey":"va\\nl€"}');
  });

  it('gives one fingerprint for reordered or respaced bodies', () => {
    const a = fingerprint(JSON.parse('{"amount": 2990, "currency": "USD"}'));
    const b = fingerprint(JSON.parse('{"currency":"USD","amount":2990}'));
    expect(a.equals(b)).toBe(true);
    expect(a.equals(fingerprint({ amount: 2991, currency: 'USD' }))).toBe(false);
  });

  it('treats an absent body as {}, and a body of null as the other request it is', () => {
    expect(fingerprint(undefined).equals(fingerprint({}))).toBe(true);
    expect(fingerprint(null).equals(fingerprint({}))).toBe(false);
    expect(fingerprint(null).equals(fingerprint(undefined))).toBe(false);
  });
});
