import { ClickHouseError, type ClickHouseSettings } from '@clickhouse/client';
import { ServiceUnavailableError } from '../../../availability';
import { sqlIdentifier, type ClickHouseClient } from '../../../clickhouse/client';

/**
 * How the API's readers of the activity store (reader.ts, bounces.ts, stats.ts, dump.ts) query it: the database
 * name made safe once, and one query given up when its read's time is out. Every value in the SQL is an escaped
 * literal (`sqlString`, `sqlNumber`): ClickHouse 18.16 has no query parameters.
 */
export class ActivityQueries {
  readonly db: string;
  readonly timeoutMs: number;

  constructor(
    readonly client: ClickHouseClient,
    database: string,
    /**
     * How long one read (all its queries) may take (default 1500 ms). A ClickHouse that is down, restarting or
     * not answering is a ServiceUnavailableError (the API answers 503) within this, never a hang.
     */
    options: { timeoutMs?: number } = {},
  ) {
    this.db = sqlIdentifier(database);
    this.timeoutMs = options.timeoutMs ?? 1500;
  }

  /** The signal of one read: every query of the read shares it. */
  deadline(): AbortSignal {
    return AbortSignal.timeout(this.timeoutMs);
  }

  /**
   * One query, given up when `signal` fires (`settings` for this query only, e.g. a longer `max_query_size`). The server's own refusals (ClickHouseError: a bad query, a limit)
   * stay what they are; anything else (refused or reset connection, no answer in time) means ClickHouse is out
   * of reach.
   */
  async query<T>(query: string, signal: AbortSignal, settings?: ClickHouseSettings): Promise<T[]> {
    try {
      return await (
        await this.client.query({
          query,
          format: 'JSONEachRow',
          abort_signal: signal,
          ...(settings && { clickhouse_settings: settings }),
        })
      ).json<T>();
    } catch (cause) {
      if (cause instanceof ClickHouseError) throw cause;
      throw new ServiceUnavailableError(
        'clickhouse',
        signal.aborted
          ? `the activity store did not answer within ${this.timeoutMs} ms`
          : `the activity store cannot be reached: ${cause instanceof Error ? cause.message : String(cause)}`,
        { retriable: true, cause },
      );
    }
  }
}

/**
 * The total a page of a search answers with. Its count and its page are two queries, two moments: a message or bounce
 * that lands between them is in one and not the other (a TotalCount of 1 with an empty page). A page shorter than asked
 * for read every match from its offset on, so offset + its length is the total as of that read; an empty page past
 * the first only says the total was at most the offset then.
 */
export function pageTotal(counted: number, offset: number, count: number, pageLength: number): number {
  if (count === 0) return counted;
  if (pageLength >= count) return Math.max(counted, offset + pageLength);
  if (pageLength > 0 || offset === 0) return offset + pageLength;
  return Math.min(counted, offset);
}
