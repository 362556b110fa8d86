import { isHostValue } from './request-headers';

describe('the Host header (RFC 9112 §3.2)', () => {
  it.each([
    'api.example.com',
    'API.Example.COM',
    'api.example.com.',
    'localhost:3000',
    '127.0.0.1:80',
    'x:0',
    'x:',
    '[::1]',
    '[::1]:8080',
    '[2001:db8::7]:443',
    '[v1.fe80::a+en1]',
    '[fe80::1%25eth0]',
    'a,b',
    'caf%C3%A9.example',
    '',
  ])('takes %j', (host) => {
    expect(isHostValue(host)).toBe(true);
  });

  it.each(['a b', '[::1', '::1', '[zz]', '[:::::]', 'x:99999', 'x:65536', 'user@host', 'café.example', 'x:8a'])(
    'refuses %j',
    (host) => {
      expect(isHostValue(host)).toBe(false);
    },
  );
});
