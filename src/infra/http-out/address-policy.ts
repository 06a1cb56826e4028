import { isIP } from 'net';

/**
 * Which IP addresses an outbound request (webhooks, later push gateways) may connect to when private
 * networks are not allowed. `classifyAddress` answers null for a public address, else the reason it is
 * refused. IPv4-mapped and IPv4-compatible IPv6 forms are refused outright; NAT64 and 6to4 addresses
 * are judged by the IPv4 address they embed.
 */

interface V4Range {
  base: number;
  bits: number;
  reason: string;
}

const v4 = (cidr: string, reason: string): V4Range => {
  const [addr, bits] = cidr.split('/');
  return { base: parseV4(addr!)!, bits: Number(bits), reason };
};

// Most specific first: the first match names the reason.
const V4_BLOCKED: V4Range[] = [
  v4('169.254.169.254/32', 'a cloud metadata address'),
  v4('168.63.129.16/32', 'a cloud metadata address'),
  v4('100.100.100.200/32', 'a cloud metadata address'),
  v4('0.0.0.0/8', 'an unspecified ("this network") address'),
  v4('10.0.0.0/8', 'a private address'),
  v4('100.64.0.0/10', 'a carrier-grade NAT (shared) address'),
  v4('127.0.0.0/8', 'a loopback address'),
  v4('169.254.0.0/16', 'a link-local address'),
  v4('172.16.0.0/12', 'a private address'),
  v4('192.0.0.0/24', 'an IETF protocol assignment address'),
  v4('192.0.2.0/24', 'a documentation address'),
  v4('192.88.99.0/24', 'a 6to4 relay address'),
  v4('192.168.0.0/16', 'a private address'),
  v4('198.18.0.0/15', 'a benchmarking address'),
  v4('198.51.100.0/24', 'a documentation address'),
  v4('203.0.113.0/24', 'a documentation address'),
  v4('224.0.0.0/4', 'a multicast address'),
  v4('240.0.0.0/4', 'a reserved address'),
];

/** Dotted-quad IPv4 to a 32-bit unsigned integer; null when it is not one. */
export function parseV4(address: string): number | null {
  const parts = address.split('.');
  if (parts.length !== 4) return null;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return null;
    const octet = Number(p);
    if (octet > 255) return null;
    n = n * 256 + octet;
  }
  return n;
}

/** An IPv6 address (zone id allowed, dotted IPv4 tail allowed) as eight 16-bit groups; null when invalid. */
export function parseV6(address: string): number[] | null {
  let a = address.toLowerCase();
  const zone = a.indexOf('%');
  if (zone >= 0) a = a.slice(0, zone);
  if (isIP(a) !== 6) return null;
  const lastColon = a.lastIndexOf(':');
  const maybeV4 = a.slice(lastColon + 1);
  if (maybeV4.includes('.')) {
    const n = parseV4(maybeV4);
    if (n === null) return null;
    a = `${a.slice(0, lastColon + 1)}${Math.floor(n / 65536).toString(16)}:${(n % 65536).toString(16)}`;
  }
  const parse = (s: string) =>
    s === '' ? [] : s.split(':').map((x) => (/^[0-9a-f]{1,4}$/.test(x) ? parseInt(x, 16) : NaN));
  const halves = a.split('::');
  if (halves.length > 2) return null;
  const h = parse(halves[0]!);
  let groups: number[];
  if (halves.length === 1) {
    groups = h;
  } else {
    const r = parse(halves[1]!);
    if (h.length + r.length > 7) return null;
    groups = [...h, ...new Array<number>(8 - h.length - r.length).fill(0), ...r];
  }
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return null;
  return groups;
}

function classifyV4(n: number): string | null {
  for (const r of V4_BLOCKED) {
    const size = 2 ** (32 - r.bits);
    if (n >= r.base && n < r.base + size) return r.reason;
  }
  return null;
}

function embeddedV4(hi: number, lo: number): number {
  return hi * 65536 + lo;
}

function classifyV6(g: number[]): string | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const zeroTo = (k: number) => g.slice(0, k).every((x) => x === 0);
  if (zeroTo(8)) return 'an unspecified address';
  if (zeroTo(7) && g7 === 1) return 'a loopback address';
  if (zeroTo(5) && g5 === 0xffff) return 'an IPv4-mapped address';
  if (zeroTo(6)) return 'an IPv4-compatible address';
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    const inner = classifyV4(embeddedV4(g6, g7));
    return inner ? `a NAT64 address of ${inner}` : null;
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'a local-use NAT64 address';
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return 'a discard-only address';
  if (g0 === 0x2001 && g1 === 0) return 'a Teredo address';
  if (g0 === 0x2001 && g1 === 0xdb8) return 'a documentation address';
  if (g0 === 0x2002) {
    const inner = classifyV4(embeddedV4(g1, g2));
    return inner ? `a 6to4 address of ${inner}` : null;
  }
  if ((g0 & 0xfe00) === 0xfc00) return 'a unique-local (private) address';
  if ((g0 & 0xffc0) === 0xfe80) return 'a link-local address';
  if ((g0 & 0xffc0) === 0xfec0) return 'a site-local address';
  if ((g0 & 0xff00) === 0xff00) return 'a multicast address';
  return null;
}

/** Null when `address` (an IP literal, IPv6 with or without brackets) is public, else why it is refused. */
export function classifyAddress(address: string): string | null {
  const a = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const n4 = parseV4(a);
  if (n4 !== null) return classifyV4(n4);
  const g = parseV6(a);
  if (g) return classifyV6(g);
  return 'not an IP address';
}

/** Host names that always mean this machine, whatever DNS says (RFC 6761). */
export function isLocalHostname(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}
