import { isForbiddenAddress, notifyUrlProblem } from './ssrf-guard';

describe('destination checks', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.251',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::a00:1',
    '2002:c0a8:101::',
    '2001:db8::1',
    '::ffff:0:127.0.0.1',
    '::ffff:0:7f00:1',
    '0::ffff:0:a00:1',
    '::1.2.3.4',
    '::8.8.8.8',
    '3fff::1',
    '5f00::1',
    '64:ff9b:1::8.8.8.8',
    'not an address',
  ])('forbids %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '::ffff:0:8.8.8.8',
    '64:ff9b::8.8.8.8',
  ])('allows %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });

  it.each([
    'http://localhost/n',
    'http://ip6-localhost/n',
    'http://vm:3000/n',
    'http://receiver./n',
    'https://app.localhost/n',
    'https://printer.local/n',
    'https://router.home.arpa/n',
    'http://metadata.google.internal/computeMetadata/v1/',
    'https://Billing.Corp.INTERNAL./n',
  ])('refuses %s, a name only a private network resolves', (url) => {
    expect(notifyUrlProblem(url, 'test', false)).toMatch(/private network/);
    expect(notifyUrlProblem(url, 'test', true)).toBeNull();
  });

  it.each([
    'https://merchant.example/n',
    'https://local.example.com/n',
    'https://internal.shop.co/n',
    'https://x.io/n',
  ])('allows %s: a public name, even one with a reserved word as one of its labels', (url) => {
    expect(notifyUrlProblem(url, 'test', false)).toBeNull();
  });

  it('wants https in live, accepts http in test, and is lifted by NOTIFY_ALLOW_PRIVATE_NETWORKS', () => {
    expect(notifyUrlProblem('http://merchant.example/n', 'live', false)).toMatch(/https/);
    expect(notifyUrlProblem('http://merchant.example/n', 'test', false)).toBeNull();
    expect(notifyUrlProblem('http://127.0.0.1:4000/n', 'test', false)).toMatch(/private/);
    expect(notifyUrlProblem('http://127.0.0.1:4000/n', 'test', true)).toBeNull();
    expect(notifyUrlProblem('http://127.0.0.1:4000/n', 'live', true)).toMatch(/https/);
  });
});
