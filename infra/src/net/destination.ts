import { lookup } from 'node:dns/promises';
import { classifyAddress, isIpLiteral, type AddressClass } from './addresses';

/** Every address a host name resolves to (both families), as the HTTP client would connect to one of them. */
export type HostResolver = (hostname: string) => Promise<string[]>;

/**
 * The system resolver (getaddrinfo, what node's HTTP clients use), every address of both families: checking one
 * address while the client connects to another would let a name with a private address slip through.
 */
export const systemHostResolver: HostResolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * Where a webhook URL leads:
 * - `public`: every address its host has is public (`addresses`, to connect to exactly these);
 * - `refused`: the host is, or resolves to, an address the service never calls (`address`, its `addressClass`);
 * - `unresolved`: the name has no address now (or DNS failed): nothing to judge yet.
 */
export type DestinationVerdict =
  | { kind: 'public'; host: string; addresses: string[] }
  | { kind: 'refused'; host: string; address: string; addressClass: AddressClass }
  | { kind: 'unresolved'; host: string; cause: unknown };

/** `localhost` and `*.localhost` are loopback by definition (RFC 6761), whatever a resolver says. */
function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Judges where a URL leads. The host of an IP literal is judged as it is (the WHATWG URL parser has already turned
 * `0x7f.1` or `2130706433` into `127.0.0.1`); a name is resolved with `resolve` and refused if ANY of its
 * addresses is not public. Call it when a webhook is configured and again before every call (a name may resolve
 * elsewhere by then: DNS rebinding).
 */
export async function checkDestination(url: string | URL, resolve: HostResolver): Promise<DestinationVerdict> {
  const parsed = typeof url === 'string' ? new URL(url) : url;
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  if (isIpLiteral(host)) {
    const addressClass = classifyAddress(host);
    return addressClass === 'public'
      ? { kind: 'public', host, addresses: [host] }
      : { kind: 'refused', host, address: host, addressClass };
  }
  if (isLocalhostName(host)) return { kind: 'refused', host, address: host, addressClass: 'loopback' };
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (cause) {
    return { kind: 'unresolved', host, cause };
  }
  if (addresses.length === 0) return { kind: 'unresolved', host, cause: new Error(`${host} has no address`) };
  for (const address of addresses) {
    const addressClass = classifyAddress(address);
    if (addressClass !== 'public') return { kind: 'refused', host, address, addressClass };
  }
  return { kind: 'public', host, addresses };
}
