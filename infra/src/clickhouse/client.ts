import { createClient, type ClickHouseClient } from '@clickhouse/client';

export type { ClickHouseClient };

export function createClickHouse(url: string, database?: string): ClickHouseClient {
  return createClient({
    url,
    ...(database ? { database } : {}),
    request_timeout: 60_000,
    // The local server keeps idle connections 10 s (keep_alive_timeout); reuse them a little less than that.
    keep_alive: { idle_socket_ttl: 8000 },
    // ClickHouse 18.16 (Debian's) knows few settings; send none it might refuse.
    clickhouse_settings: {},
  });
}

/**
 * A string literal for ClickHouse SQL. Debian's ClickHouse (18.16) has no query
 * parameters, so every value that reaches SQL passes through here (or `sqlNumber`).
 */
export function sqlString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\0/g, '\\0').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}'`;
}

export function sqlNumber(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
  return String(Math.trunc(value));
}

/** A database or table name: letters, digits and underscores only, so it needs no quoting. */
export function sqlIdentifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`not a safe identifier: ${name}`);
  return name;
}
