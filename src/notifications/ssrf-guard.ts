/**
 * Which destinations a notification may reach (docs/notifications.md, "Server-side request
 * forgery"). At creation the URL's host is checked as written (IP literals in every
 * notation the URL parser normalises, and the names of private networks); at delivery the
 * address that DNS returned is checked at connect time, so a name that resolves to a
 * private address, then or later (DNS rebinding), is caught too.
 */
import { BlockList, isIP } from 'node:net';

const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  // The rest of the reserved ::/8 (the deprecated IPv4-compatible ::a.b.c.d and local-use
  // NAT64 64:ff9b:1::/48 among it) is refused by isForbiddenAddress: BlockList reads IPv4
  // addresses as mapped into it.
  ['::', 128], // unspecified
  ['::1', 128],
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments, Teredo included
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['5f00::', 16], // segment routing (RFC 9602)
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv6');
}

/** Whether an IP address (v4, v6, or IPv4 inside IPv6) is in a range a notification may not reach. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return FORBIDDEN.check(bare, 'ipv4');
  if (family !== 6) return true;
  const groups = expandIpv6(bare);
  if (groups === null) return true;
  const embedded = embeddedIpv4(groups);
  if (embedded !== null) return FORBIDDEN.check(embedded, 'ipv4');
  // ::/8 is reserved; the IPv4 addresses embedded in it were checked above.
  if (groups[0] < 0x100) return true;
  return FORBIDDEN.check(bare, 'ipv6');
}

/**
 * The IPv4 address inside IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96,
 * SIIT), NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses; these reach the IPv4
 * address's network.
 */
function embeddedIpv4(groups: number[]): string | null {
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  if (zeros(0, 5) && groups[5] === 0xffff) return v4(groups[6], groups[7]);
  if (zeros(0, 4) && groups[4] === 0xffff && groups[5] === 0) return v4(groups[6], groups[7]);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return v4(groups[6], groups[7]);
  if (groups[0] === 0x2002) return v4(groups[1], groups[2]);
  return null;
}

function expandIpv6(address: string): number[] | null {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = text.slice(0, -dotted[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const parse = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const fill = text.includes('::') ? 8 - left.length - right.length : 0;
  const groups = [...left, ...new Array<number>(Math.max(fill, 0)).fill(0), ...right];
  return groups.length === 8 && groups.every((group) => Number.isInteger(group)) ? groups : null;
}

/**
 * Names that lead only into a private network or to this machine, whatever DNS says: a
 * name without a dot (`localhost`, `ip6-localhost`, a container's or an intranet host's
 * name), which only the local hosts file or resolver's search list can resolve, and names
 * under the domains reserved for such use: `.localhost` (RFC 6761), `.local` (mDNS, RFC
 * 6762), `.home.arpa` (RFC 8375) and `.internal` (ICANN, 2024; cloud metadata services such
 * as `metadata.google.internal`).
 */
const PRIVATE_NETWORK_DOMAINS = ['localhost', 'local', 'home.arpa', 'internal'];

function isPrivateNetworkName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.+$/, '');
  return !name.includes('.') || PRIVATE_NETWORK_DOMAINS.some((domain) => name.endsWith(`.${domain}`));
}

/**
 * Why a notify_url may not be used by a key of this environment, or null when it may.
 * https only in live; http too in test; no private, loopback or reserved destination
 * unless NOTIFY_ALLOW_PRIVATE_NETWORKS.
 */
export function notifyUrlProblem(value: string, environment: 'test' | 'live', allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'notify_url must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && environment === 'test')) {
    return environment === 'live'
      ? 'notify_url must be an https:// URL in live mode'
      : 'notify_url must be an http:// or https:// URL';
  }
  if (allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    return isForbiddenAddress(host)
      ? 'notify_url must not point to a loopback, private, link-local or reserved address'
      : null;
  }
  return isPrivateNetworkName(host)
    ? 'notify_url must not name a host of a private network (a name without a dot, or one under .localhost, .local, .home.arpa or .internal)'
    : null;
}
