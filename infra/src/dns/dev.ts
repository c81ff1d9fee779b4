import { DEFAULT_ZONE_FILE } from './zone';

/** The development DNS server's port on loopback when SENDLINE_DEV_DNS_PORT does not say otherwise. */
export const DEFAULT_DEV_DNS_PORT = 5353;

export interface DevDnsSettings {
  host: string;
  port: number;
  /** `host:port`, as SENDLINE_DNS_SERVERS takes it. */
  address: string;
  /** The zone file it serves. */
  zoneFile: string;
}

/**
 * Where the development DNS server (infra/local/src/devDnsServer.ts) listens and what it serves:
 * SENDLINE_DEV_DNS_HOST (127.0.0.1), SENDLINE_DEV_DNS_PORT (5353), SENDLINE_DEV_DNS_ZONE (.local/dns-zone.json).
 */
export function devDnsSettings(env: NodeJS.ProcessEnv = process.env): DevDnsSettings {
  const host = env.SENDLINE_DEV_DNS_HOST || '127.0.0.1';
  const port = Number(env.SENDLINE_DEV_DNS_PORT || DEFAULT_DEV_DNS_PORT);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new Error(`SENDLINE_DEV_DNS_PORT must be a port number, not ${JSON.stringify(env.SENDLINE_DEV_DNS_PORT)}`);
  }
  return { host, port, address: `${host}:${port}`, zoneFile: env.SENDLINE_DEV_DNS_ZONE || DEFAULT_ZONE_FILE };
}
