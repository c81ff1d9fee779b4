import { Resolver } from 'node:dns/promises';
import { InfrastructureError } from '../errors';

/**
 * DNS lookups for the console's domain verification (TXT) and return path verification (MX and TXT), with
 * node:dns and a resolver that can be pointed at chosen servers (SENDLINE_DNS_SERVERS, e.g. "127.0.0.1:5353"), so
 * that development and tests can answer from a DNS server on loopback. Without servers, the system's resolvers are
 * used.
 */

/** The TXT records at a name, each as its character-strings (what node:dns returns); [] when there are none. */
export type TxtResolver = (name: string) => Promise<string[][]>;

/** The MX records at a name (exchange and priority, as node:dns returns them); [] when there are none. */
export type MxResolver = (name: string) => Promise<{ exchange: string; priority: number }[]>;

export interface DnsResolverOptions {
  /** `host` or `host:port` (IPv6 as `[addr]:port`); absent or empty: the system's resolvers. */
  servers?: readonly string[];
  /** How long one query waits for an answer (c-ares doubles it on each try). Default 2000 ms. */
  timeoutMs?: number;
  /** Attempts per server. Default 2. */
  tries?: number;
}

export const DEFAULT_DNS_TIMEOUT_MS = 2000;
export const DEFAULT_DNS_TRIES = 2;

/**
 * node:dns error codes and what they mean for a lookup (kafkajs's habit: one table from external codes
 * to ours). `none` means the name has no such records: an answer, not a failure.
 */
const DNS_ERRORS: Record<
  string,
  { outcome: 'none' } | { outcome: 'fail'; code: string; retriable: boolean; what: string }
> = {
  ENOTFOUND: { outcome: 'none' }, // NXDOMAIN: the name does not exist
  ENODATA: { outcome: 'none' }, // the name exists, without records of this type
  ETIMEOUT: { outcome: 'fail', code: 'DnsTimeout', retriable: true, what: 'no DNS server answered in time' },
  ESERVFAIL: {
    outcome: 'fail',
    code: 'DnsServerFailure',
    retriable: true,
    what: 'the DNS server failed to answer (SERVFAIL)',
  },
  ECONNREFUSED: {
    outcome: 'fail',
    code: 'DnsUnreachable',
    retriable: true,
    what: 'the DNS server refused the connection',
  },
  EOF: { outcome: 'fail', code: 'DnsUnreachable', retriable: true, what: 'the DNS server closed the connection' },
  EBADRESP: { outcome: 'fail', code: 'DnsBadResponse', retriable: true, what: 'the DNS server sent a malformed reply' },
  ECANCELLED: { outcome: 'fail', code: 'DnsCancelled', retriable: true, what: 'the DNS query was cancelled' },
  EREFUSED: {
    outcome: 'fail',
    code: 'DnsRefused',
    retriable: false,
    what: 'the DNS server refused the query (REFUSED)',
  },
  EFORMERR: {
    outcome: 'fail',
    code: 'DnsBadQuery',
    retriable: false,
    what: 'the DNS server found the query malformed',
  },
  ENOTIMP: {
    outcome: 'fail',
    code: 'DnsNotImplemented',
    retriable: false,
    what: 'the DNS server does not implement this query',
  },
  EBADNAME: { outcome: 'fail', code: 'DnsBadName', retriable: false, what: 'the name is not a valid DNS name' },
  EBADQUERY: { outcome: 'fail', code: 'DnsBadQuery', retriable: false, what: 'the DNS query is malformed' },
};

/** Parses a server list ("127.0.0.1:5353, 10.0.0.2"); undefined when the value is empty. */
export function parseDnsServers(value: string | undefined): string[] | undefined {
  const servers = (value ?? '')
    .split(/[\s,]+/)
    .map((server) => server.trim())
    .filter(Boolean);
  return servers.length > 0 ? servers : undefined;
}

/** The resolver settings the environment asks for: SENDLINE_DNS_SERVERS and SENDLINE_DNS_TIMEOUT_MS. */
export function dnsResolverOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): DnsResolverOptions {
  const timeout = Number(env.SENDLINE_DNS_TIMEOUT_MS);
  return {
    servers: parseDnsServers(env.SENDLINE_DNS_SERVERS),
    ...(Number.isSafeInteger(timeout) && timeout > 0 ? { timeoutMs: timeout } : {}),
  };
}

function errorCode(error: unknown): string | undefined {
  return error && typeof error === 'object' && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

/** A TXT lookup with node:dns on the given servers; DNS errors become InfrastructureErrors (see the table). */
export function createTxtResolver(options: DnsResolverOptions = {}): TxtResolver {
  return lookupOf(options, 'TXT', (resolver, name) => resolver.resolveTxt(name));
}

/** An MX lookup with node:dns on the given servers; DNS errors become InfrastructureErrors (see the table). */
export function createMxResolver(options: DnsResolverOptions = {}): MxResolver {
  return lookupOf(options, 'MX', (resolver, name) => resolver.resolveMx(name));
}

/** One kind of lookup on the given servers: no such name or records is an empty answer, the rest errors. */
function lookupOf<T>(
  options: DnsResolverOptions,
  type: string,
  resolve: (resolver: Resolver, name: string) => Promise<T[]>,
): (name: string) => Promise<T[]> {
  const resolver = new Resolver({
    timeout: options.timeoutMs ?? DEFAULT_DNS_TIMEOUT_MS,
    tries: options.tries ?? DEFAULT_DNS_TRIES,
  });
  const servers = options.servers && options.servers.length > 0 ? [...options.servers] : undefined;
  if (servers) {
    try {
      resolver.setServers(servers);
    } catch (cause) {
      throw new InfrastructureError(
        'BadDnsServers',
        `not a DNS server list: ${JSON.stringify(servers.join(','))} (give host or host:port, comma-separated)`,
        { retriable: false, cause },
      );
    }
  }
  const where = servers ? `DNS server ${servers.join(', ')}` : 'the system DNS resolver';
  return async (name: string) => {
    try {
      return await resolve(resolver, name);
    } catch (cause) {
      const code = errorCode(cause);
      const known = code ? DNS_ERRORS[code] : undefined;
      if (known?.outcome === 'none') return [];
      throw new InfrastructureError(
        known ? known.code : 'DnsLookupFailed',
        `${type} lookup of ${name} at ${where} failed: ${known ? known.what : String((cause as Error)?.message ?? cause)}`,
        { retriable: known ? known.retriable : false, cause },
      );
    }
  };
}

/** createTxtResolver with the environment's settings. */
export function txtResolverFromEnv(env: NodeJS.ProcessEnv = process.env): TxtResolver {
  return createTxtResolver(dnsResolverOptionsFromEnv(env));
}

/** createMxResolver with the environment's settings. */
export function mxResolverFromEnv(env: NodeJS.ProcessEnv = process.env): MxResolver {
  return createMxResolver(dnsResolverOptionsFromEnv(env));
}
