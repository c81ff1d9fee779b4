import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { InfrastructureError } from '../errors';
import { DeliveryError } from './errors';

/**
 * Where mail for a recipient domain goes: the domain's mail servers, in order of preference.
 *
 * - `MxRouter`: an MX lookup with node:dns (servers configurable, like SENDLINE_DNS_SERVERS), hosts sorted
 *   by preference; no MX record → the domain's own A/AAAA record (the implicit MX, RFC 5321 §5.1). Each
 *   host name is resolved to an address here, with the same servers (the SMTP connection then goes to
 *   the address and presents the name for TLS).
 * - `RelayRouter`: one relay host for every domain (development and tests: the loopback mail server).
 *
 * The answers a lookup can give, as delivery errors the domain's classifier understands:
 *
 * | DNS answer                                  | as                                        | so         |
 * |---------------------------------------------|-------------------------------------------|------------|
 * | the domain does not exist (NXDOMAIN)        | 550 5.1.2 Host or domain name not found   | hard bounce |
 * | null MX ("." RFC 7505)                      | 556 5.1.10 Recipient address has null MX  | hard bounce |
 * | no MX and no A/AAAA record                  | 550 5.1.2 Host or domain name not found   | hard bounce |
 * | timeout, SERVFAIL, refused, other failures  | connection failure                        | deferred   |
 * | MX hosts none of which resolves             | connection failure                        | deferred   |
 */

export interface MailHost {
  /** The host's name (the MX exchange, or the relay as configured): shown as the destination server. */
  name: string;
  /** Where to connect: an IP address (or, for a relay, the host as configured). */
  address: string;
  port: number;
}

export interface MailRouter {
  /** The hosts to try for a recipient domain, best first; throws a DeliveryError when there are none. */
  route(domain: string): Promise<MailHost[]>;
}

/** Parses `host:port` (IPv6 as `[addr]:port`); the port defaults to `defaultPort`. */
export function parseHostPort(value: string, defaultPort = 25): { host: string; port: number } {
  const trimmed = value.trim();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(trimmed);
  const plain = /^([^:]+)(?::(\d+))?$/.exec(trimmed);
  const match = bracketed ?? (isIP(trimmed) === 6 ? [trimmed, trimmed, undefined] : plain);
  const host = match?.[1];
  const port = match?.[2] === undefined ? defaultPort : Number(match[2]);
  if (!host || !Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new InfrastructureError('BadHostPort', `not a host:port: ${JSON.stringify(value)}`, { retriable: false });
  }
  return { host, port };
}

export class RelayRouter implements MailRouter {
  private readonly host: MailHost;
  constructor(host: string, port: number) {
    this.host = { name: host, address: host, port };
  }
  async route(): Promise<MailHost[]> {
    return [this.host];
  }
}

export interface MxRouterOptions {
  /** DNS servers, `host` or `host:port`; absent: the system's resolvers. */
  servers?: readonly string[];
  /** The SMTP port of MX hosts (25; another one only for tests). */
  port?: number;
  timeoutMs?: number;
  tries?: number;
  /** How long a successful lookup is reused. */
  cacheTtlMs?: number;
  now?: () => number;
}

const NO_RECORDS = new Set(['ENODATA', 'ENOTFOUND']);

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function notFound(domain: string, why: string): DeliveryError {
  const response = `550 5.1.2 Host or domain name not found: ${domain} (${why})`;
  return new DeliveryError(response, { kind: 'response', responseCode: 550, response, command: 'DNS' });
}

function lookupFailed(domain: string, what: string, cause: unknown): DeliveryError {
  return new DeliveryError(`DNS ${what} lookup for ${domain} failed (${codeOf(cause) ?? String(cause)})`, {
    kind: 'connection',
    host: domain,
    cause,
  });
}

export class MxRouter implements MailRouter {
  private readonly resolver: Resolver;
  private readonly port: number;
  private readonly cacheTtlMs: number;
  private readonly now: () => number;
  private readonly cache = new Map<string, { hosts: Promise<MailHost[]>; expires: number }>();

  constructor(options: MxRouterOptions = {}) {
    this.resolver = new Resolver({ timeout: options.timeoutMs ?? 5000, tries: options.tries ?? 2 });
    if (options.servers && options.servers.length > 0) {
      try {
        this.resolver.setServers([...options.servers]);
      } catch (cause) {
        throw new InfrastructureError('BadDnsServers', `not a DNS server list: ${options.servers.join(',')}`, {
          retriable: false,
          cause,
        });
      }
    }
    this.port = options.port ?? 25;
    this.cacheTtlMs = options.cacheTtlMs ?? 5 * 60_000;
    this.now = options.now ?? Date.now;
  }

  route(domain: string): Promise<MailHost[]> {
    const name = domain.toLowerCase();
    const cached = this.cache.get(name);
    if (cached && cached.expires > this.now()) return cached.hosts;
    const hosts = this.lookup(name);
    this.cache.set(name, { hosts, expires: this.now() + this.cacheTtlMs });
    hosts.catch(() => this.cache.delete(name));
    return hosts;
  }

  private async lookup(domain: string): Promise<MailHost[]> {
    let exchanges: string[];
    try {
      const records = await this.resolver.resolveMx(domain);
      if (records.length === 1 && (records[0]!.exchange === '' || records[0]!.exchange === '.')) {
        const response = `556 5.1.10 Recipient address has null MX: ${domain} accepts no mail`;
        throw new DeliveryError(response, { kind: 'response', responseCode: 556, response, command: 'DNS' });
      }
      exchanges = records
        .filter((record) => record.exchange !== '' && record.exchange !== '.')
        .sort((a, b) => a.priority - b.priority)
        .map((record) => record.exchange.replace(/\.$/, '').toLowerCase());
    } catch (error) {
      if (error instanceof DeliveryError) throw error;
      const code = codeOf(error);
      if (code === 'ENOTFOUND') throw notFound(domain, 'no such domain');
      if (code !== 'ENODATA') throw lookupFailed(domain, 'MX', error);
      exchanges = []; // no MX: the domain itself is the mail host
    }
    if (exchanges.length === 0) {
      const address = await this.address(domain);
      if (!address) throw notFound(domain, 'no MX and no address record');
      return [{ name: domain, address, port: this.port }];
    }
    const hosts: MailHost[] = [];
    let lastError: unknown;
    for (const exchange of exchanges) {
      try {
        const address = await this.address(exchange);
        if (address) hosts.push({ name: exchange, address, port: this.port });
      } catch (error) {
        lastError = error;
      }
    }
    if (hosts.length === 0) {
      throw lastError instanceof DeliveryError
        ? lastError
        : new DeliveryError(`none of the mail servers of ${domain} (${exchanges.join(', ')}) has an address`, {
            kind: 'connection',
            host: domain,
          });
    }
    return hosts;
  }

  /** The first IPv4 address of a host, else its first IPv6 address; undefined when it has neither. */
  private async address(host: string): Promise<string | undefined> {
    if (isIP(host)) return host;
    for (const family of ['resolve4', 'resolve6'] as const) {
      try {
        const addresses = await this.resolver[family](host);
        if (addresses[0]) return addresses[0];
      } catch (error) {
        if (!NO_RECORDS.has(codeOf(error) ?? '')) throw lookupFailed(host, family === 'resolve4' ? 'A' : 'AAAA', error);
      }
    }
    return undefined;
  }
}
