import { Readable } from 'node:stream';
import { retry, type RetryOptions } from '../../retry';
import { sqlIdentifier, sqlNumber, sqlString, type ClickHouseClient } from '../../clickhouse/client';
import type { MessageRow } from './rows';
import { toTabSeparated } from './tabSeparated';

/** A request whose connection broke (a kept-alive socket the server had closed) is tried again, twice at most. */
const CONNECTION_RETRY: RetryOptions = {
  maxAttempts: 3,
  initialDelayMs: 100,
  maxDelayMs: 1000,
  shouldRetry: (error) => {
    const code = (error as { code?: unknown })?.code;
    const message = error instanceof Error ? error.message : '';
    return (
      (typeof code === 'string' && ['ECONNRESET', 'EPIPE', 'ECONNREFUSED', 'ETIMEDOUT'].includes(code)) ||
      /socket hang up|ECONNRESET|EPIPE/.test(message)
    );
  },
};

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * What the activity writer sends to and reads from one activity database: rows inserted as TabSeparated,
 * rows of messages read back by their sorting key, and the count of replays swapped in. A request whose
 * connection broke is sent again.
 */
export class ActivityTables {
  private readonly db: string;

  constructor(
    private readonly client: ClickHouseClient,
    database: string,
  ) {
    this.db = sqlIdentifier(database);
  }

  async insert<R extends object>(
    table: string,
    rows: readonly R[],
    columns: readonly (readonly [keyof R, unknown])[],
  ): Promise<void> {
    if (rows.length === 0) return;
    const chunks: Buffer[] = [];
    for (let i = 0; i < rows.length; i += 5000) {
      if (i > 0) await yieldToEventLoop();
      chunks.push(
        Buffer.from(toTabSeparated(rows.slice(i, i + 5000), columns as Parameters<typeof toTabSeparated<R>>[1])),
      );
    }
    // Rows written twice collapse (ReplacingMergeTree), so an insert whose connection broke is simply sent again.
    await retry(
      () =>
        this.client.insert({
          table: `${this.db}.${table}`,
          columns: columns.map(([name]) => String(name)) as [string, ...string[]],
          values: Readable.from(chunks, { objectMode: false }),
          format: 'TabSeparated',
        }),
      CONNECTION_RETRY,
    );
  }

  /**
   * Reads back the rows of messages not in memory: their key (day, received_at) from
   * their Accepted event (`message_events` is ordered by organization and message),
   * then the rows by their full sorting key, from those days' partitions only.
   */
  async load(wanted: { organizationId: string; messageId: string }[]): Promise<MessageRow[]> {
    const rows: MessageRow[] = [];
    for (let i = 0; i < wanted.length; i += 2000) {
      const chunk = wanted.slice(i, i + 2000);
      const pairs = chunk.map((w) => `(${sqlString(w.organizationId)}, ${sqlString(w.messageId)})`).join(', ');
      const organizations = [...new Set(chunk.map((w) => sqlString(w.organizationId)))].join(', ');
      const keys = await this.query<{ organization_id: string; message_id: string; day: string; at: string }>(
        `SELECT DISTINCT organization_id, message_id, day, intDiv(message_received_at_ms, 1000) AS at ` +
          `FROM ${this.db}.message_events WHERE organization_id IN (${organizations}) ` +
          `AND (organization_id, message_id) IN (${pairs}) AND type = 'Accepted'`,
      );
      if (keys.length === 0) continue;
      const days = [...new Set(keys.map((k) => sqlString(k.day)))].join(', ');
      const triples = keys
        .map((k) => `(${sqlString(k.organization_id)}, ${sqlNumber(Number(k.at))}, ${sqlString(k.message_id)})`)
        .join(', ');
      const found = await this.query<MessageRow>(
        `SELECT * FROM ${this.db}.messages FINAL WHERE day IN (${days}) ` +
          `AND (organization_id, toUInt32(received_at), message_id) IN (${triples})`,
      );
      rows.push(...found.map(normalizeRow));
    }
    return rows;
  }

  private async query<T>(query: string): Promise<T[]> {
    return retry(async () => (await this.client.query({ query, format: 'JSONEachRow' })).json<T>(), CONNECTION_RETRY);
  }

  /** How many replays have swapped rebuilt tables in (each leaves a row in `activity_swaps`). */
  async swaps(): Promise<number> {
    const [row] = await this.query<{ swaps: string }>(`SELECT count() AS swaps FROM ${this.db}.activity_swaps`);
    return Number(row?.swaps ?? 0);
  }
}

/** ClickHouse returns 64-bit integers as strings in JSON: back to numbers. */
export function normalizeRow(row: MessageRow): MessageRow {
  return {
    ...row,
    received_at_ms: Number(row.received_at_ms),
    size_bytes: Number(row.size_bytes),
    sent_at_ms: Number(row.sent_at_ms),
    completed_at_ms: Number(row.completed_at_ms),
    updated_at_ms: Number(row.updated_at_ms),
    version: Number(row.version),
    template_id: Number(row.template_id ?? 0),
    template_version: Number(row.template_version ?? 0),
    track_opens: Number(row.track_opens),
    received_at: Math.floor(Number(row.received_at_ms) / 1000),
  };
}
