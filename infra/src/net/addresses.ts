/**
 * Which IP addresses a webhook may be sent to: the one classification the API (when a webhook is configured) and
 * the dispatcher (at every call, against DNS rebinding) both use, so that a customer's URL can never make the
 * service reach its own network (SSRF): loopback, private ranges, link-local (the cloud metadata service at
 * 169.254.169.254 among them), unique-local IPv6, shared CGNAT space, multicast, and the reserved ranges.
 *
 * Pure: parses the address text itself (IPv4, IPv6 with `::`, an embedded IPv4 tail or a zone), no lookup.
 */

export type AddressClass =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link-local'
  | 'metadata'
  | 'unique-local'
  | 'multicast'
  | 'reserved'
  | 'invalid';

interface Range {
  /** Network address as bytes (4 for IPv4, 16 for IPv6). */
  network: number[];
  prefix: number;
  class: Exclude<AddressClass, 'public' | 'invalid'>;
}

const v4 = (text: string, prefix: number, addressClass: Range['class']): Range => ({
  network: parseIPv4(text)!,
  prefix,
  class: addressClass,
});
const v6 = (text: string, prefix: number, addressClass: Range['class']): Range => ({
  network: parseIPv6(text)!,
  prefix,
  class: addressClass,
});

/** Most specific first: the metadata address is inside link-local. */
const IPV4_RANGES: readonly Range[] = [
  v4('169.254.169.254', 32, 'metadata'),
  v4('0.0.0.0', 8, 'unspecified'),
  v4('10.0.0.0', 8, 'private'),
  v4('100.64.0.0', 10, 'shared'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local'),
  v4('172.16.0.0', 12, 'private'),
  v4('192.0.0.0', 24, 'reserved'),
  v4('192.0.2.0', 24, 'reserved'),
  v4('192.88.99.0', 24, 'reserved'),
  v4('192.168.0.0', 16, 'private'),
  v4('198.18.0.0', 15, 'reserved'),
  v4('198.51.100.0', 24, 'reserved'),
  v4('203.0.113.0', 24, 'reserved'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('240.0.0.0', 4, 'reserved'),
];

const IPV6_RANGES: readonly Range[] = [
  v6('::', 128, 'unspecified'),
  v6('::1', 128, 'loopback'),
  // AWS's metadata service over IPv6 (inside unique-local, named for the message).
  v6('fd00:ec2::254', 128, 'metadata'),
  v6('::', 96, 'reserved'), // IPv4-compatible, deprecated
  v6('100::', 64, 'reserved'), // discard-only
  v6('2001:db8::', 32, 'reserved'), // documentation
  v6('fc00::', 7, 'unique-local'),
  v6('fe80::', 10, 'link-local'),
  v6('fec0::', 10, 'private'), // site-local, deprecated
  v6('ff00::', 8, 'multicast'),
];

export function parseIPv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes = parts.map((part) => (/^(0|[1-9]\d{0,2})$/.test(part) ? Number(part) : NaN));
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : null;
}

export function parseIPv6(input: string): number[] | null {
  const text = input.replace(/%.*$/, ''); // a zone (fe80::1%eth0) names the interface, not the address
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return null;
  let tail: number[] = [];
  let head = text;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.')) {
    const ipv4 = parseIPv4(text.slice(lastColon + 1));
    if (!ipv4) return null;
    tail = ipv4;
    // Keep a '::' that ends right before the IPv4 tail (`::ffff:1.2.3.4` keeps `::ffff`, `::1.2.3.4` keeps `::`).
    head = text[lastColon - 1] === ':' ? text.slice(0, lastColon + 1) : text.slice(0, lastColon);
  }
  const halves = head.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(halves[0]!);
  const right = halves.length === 2 ? groups(halves[1]!) : [];
  const wanted = 8 - tail.length / 2;
  const missing = wanted - left.length - right.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const words = [...left, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...right];
  const bytes: number[] = [];
  for (const word of words) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(word)) return null;
    const value = parseInt(word, 16);
    bytes.push(value >> 8, value & 0xff);
  }
  return [...bytes, ...tail];
}

function inRange(bytes: number[], range: Range): boolean {
  if (bytes.length !== range.network.length) return false;
  for (let bit = 0; bit < range.prefix; bit++) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if ((bytes[byte]! & mask) !== (range.network[byte]! & mask)) return false;
  }
  return true;
}

function classifyBytes(bytes: number[]): AddressClass {
  if (bytes.length === 4) return IPV4_RANGES.find((range) => inRange(bytes, range))?.class ?? 'public';
  // An IPv4 address mapped into IPv6 (::ffff:a.b.c.d) or translated by NAT64 (64:ff9b::a.b.c.d) reaches that IPv4
  // address: judged as it.
  const isMapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  const isNat64 = bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b;
  if (isMapped || (isNat64 && bytes.slice(4, 12).every((b) => b === 0))) return classifyBytes(bytes.slice(12));
  return IPV6_RANGES.find((range) => inRange(bytes, range))?.class ?? 'public';
}

/** The class of an IP address given as text (`203.0.113.7`, `::1`, `[fe80::1]`); 'invalid' if it is none. */
export function classifyAddress(address: string): AddressClass {
  const text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const bytes = text.includes(':') ? parseIPv6(text) : parseIPv4(text);
  return bytes ? classifyBytes(bytes) : 'invalid';
}

/** Whether the class is one the service may call: only public addresses. */
export function isPublicAddress(address: string): boolean {
  return classifyAddress(address) === 'public';
}

/** Is the text an IP address literal (either family), as a URL's host would hold it? */
export function isIpLiteral(host: string): boolean {
  return classifyAddress(host) !== 'invalid';
}
