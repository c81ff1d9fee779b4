import { Readable } from 'node:stream';
import {
  evolveMessage,
  initialMessageState,
  MESSAGE_EVENT_TYPES,
  type MessageEvent,
  type MessageState,
} from '@sendline/domain';
import { InfrastructureError, describeCause } from '../errors';
import { retry, type RetryOptions } from '../retry';
import { sqlIdentifier, sqlNumber, sqlString, type ClickHouseClient } from '../clickhouse/client';
import {
  acceptedRow,
  advanceRow,
  EVENT_COLUMNS,
  eventRow,
  MESSAGE_COLUMNS,
  rowWeight,
  stateOfRow,
  toTabSeparated,
  type MessageEventRow,
  type MessageRow,
  type SourcePosition,
} from './rows';

/** A message event to write, with where it was read from when it came from Kafka. */
export interface ActivityInput {
  event: MessageEvent;
  position?: SourcePosition;
}

export interface ActivityFlushStats {
  events: number;
  messageRows: number;
  eventRows: number;
  /** Outcome events of messages the store does not hold (never accepted, or past retention): skipped. */
  orphans: number;
  /** Messages read back from ClickHouse because they were not in memory. */
  loaded: number;
  durationMs: number;
}

export interface ActivityWriterOptions {
  /** Flush when this many events are buffered (default 5000). */
  maxEvents?: number;
  /** Flush when the oldest buffered event has waited this long (default 500 ms; Infinity: only by count or `flush()`). */
  maxDelayMs?: number;
  /** Message rows kept in memory, so a status change needs no read (default 20,000 rows, 128 MB). */
  cacheRows?: number;
  cacheBytes?: number;
  /**
   * The database was empty and this writer is its only writer (a replay's fresh copy):
   * a message it never wrote is not there, so new messages need no read-back.
   */
  freshDatabase?: boolean;
  onFlush?: (stats: ActivityFlushStats) => void;
}

interface Pending {
  items: ActivityInput[];
  waiters: { resolve(): void; reject(error: unknown): void }[];
  since: number;
}

const isMessageEvent = new Set<string>(MESSAGE_EVENT_TYPES);

/** Whether a stored event is one of the message events the activity store records. */
export function isActivityEvent(event: { type: string }): event is MessageEvent {
  return isMessageEvent.has(event.type);
}

const keyOf = (organizationId: string, messageId: string) => `${organizationId}\u0000${messageId}`;

/** A 53-bit hash of a string (cyrb53): the set of messages seen holds numbers, not strings. */
function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

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

/** How many messages the writer remembers having seen before it starts over (about 100 MB). */
const SEEN_LIMIT = 4_000_000;

/**
 * Writes message events into the activity store, in batches: events are buffered
 * and written when `maxEvents` are waiting or the oldest has waited `maxDelayMs`;
 * each flush is one INSERT into `messages` and one into `message_events`. `write`
 * resolves only once its events' rows are in ClickHouse, so a consumer that commits
 * its offsets after `write` resolved never commits an event that is not written.
 *
 * Flushes run one at a time, in order. A flush folds each message's events into its
 * state with the domain's `evolveMessage` (from the row in memory, else the row read
 * back from ClickHouse) and writes the message row again only when something shown
 * changed. Idempotent: an event applied twice leaves the state as it was (no new
 * message row) and its event row has the same sorting key (ReplacingMergeTree).
 */
export class ClickHouseActivityWriter {
  private readonly db: string;
  private readonly maxEvents: number;
  private readonly maxDelayMs: number;
  private readonly cacheRows: number;
  private readonly cacheBytes: number;
  private readonly cache = new Map<string, { row: MessageRow; weight: number }>();
  private cachedBytes = 0;
  private swapsSeen: number | undefined;
  private buffer: Pending | undefined;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  /** The flushes sealed and not finished, oldest first (each settles without rejecting). */
  private readonly flushes: Promise<void>[] = [];
  private inFlightEvents = 0;
  private closed = false;
  /**
   * Hashes of the messages this writer has written. A message it has not seen needs
   * no read-back when its MessageAccepted comes (its other events follow it in its
   * partition); with `freshDatabase`, a message it has not seen is not in the database at all.
   */
  private readonly seen = new Set<number>();
  private fresh: boolean;

  constructor(
    private readonly client: ClickHouseClient,
    database: string,
    private readonly options: ActivityWriterOptions = {},
  ) {
    this.db = sqlIdentifier(database);
    this.maxEvents = options.maxEvents ?? 5000;
    this.maxDelayMs = options.maxDelayMs ?? 500;
    this.cacheRows = options.cacheRows ?? 20_000;
    this.cacheBytes = options.cacheBytes ?? 128 * 1024 * 1024;
    this.fresh = options.freshDatabase ?? false;
  }

  /** Events buffered or being written. */
  get backlog(): number {
    return (this.buffer?.items.length ?? 0) + this.inFlightEvents;
  }

  /** Buffers the events; resolves when they are written, rejects when their flush failed. */
  write(items: readonly ActivityInput[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the activity writer is closed'));
    if (items.length === 0) return Promise.resolve();
    const buffer = (this.buffer ??= { items: [], waiters: [], since: Date.now() });
    buffer.items.push(...items);
    const written = new Promise<void>((resolve, reject) => buffer.waiters.push({ resolve, reject }));
    if (buffer.items.length >= this.maxEvents) this.seal();
    else if (!this.timer && Number.isFinite(this.maxDelayMs)) {
      this.timer = setTimeout(() => this.seal(), this.maxDelayMs);
    }
    return written;
  }

  /**
   * Backpressure for a producer that does not await each `write` (a replay): waits
   * while more than `events` events are being written.
   */
  async waitForRoom(events: number): Promise<void> {
    while (this.inFlightEvents > events && this.flushes.length > 0) await this.flushes[0];
  }

  /** Writes what is buffered now; resolves when every flush so far is done (rejects if this one failed). */
  async flush(): Promise<void> {
    const buffer = this.buffer;
    const written = buffer
      ? new Promise<void>((resolve, reject) => buffer.waiters.push({ resolve, reject }))
      : undefined;
    this.seal();
    await this.chain;
    await written;
  }

  /** Flushes and refuses further writes. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  /** Forgets the rows held in memory (the next state change reads them back). */
  clearCache(): void {
    this.cache.clear();
    this.cachedBytes = 0;
  }

  private seal(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const pending = this.buffer;
    if (!pending) return;
    this.buffer = undefined;
    this.inFlightEvents += pending.items.length;
    const run = this.chain.then(() => this.writeBatch(pending.items));
    const settled = run.then(
      () => {
        for (const waiter of pending.waiters) waiter.resolve();
      },
      (error: unknown) => {
        for (const waiter of pending.waiters) waiter.reject(error);
      },
    );
    const done = settled.then(() => {
      this.inFlightEvents -= pending.items.length;
      this.flushes.splice(this.flushes.indexOf(done), 1);
    });
    this.flushes.push(done);
    this.chain = done;
  }

  private async writeBatch(items: ActivityInput[]): Promise<void> {
    const started = Date.now();
    try {
      await this.dropCacheAfterSwap();
      const working = new Map<string, MessageRow>();
      const missing = new Map<string, { organizationId: string; messageId: string }>();
      const arriving = new Set<string>();
      const keys = items.map(({ event }) => keyOf(event.metadata.organizationId, event.data.messageId));
      for (let i = 0; i < items.length; i++) {
        const event = items[i]!.event;
        const key = keys[i]!;
        if (working.has(key) || missing.has(key) || arriving.has(key)) continue;
        const cached = this.cache.get(key)?.row;
        if (cached) {
          working.set(key, cached);
          continue;
        }
        // Not in memory. Read it back if it may be in ClickHouse: a message seen before (then dropped from
        // memory), or, unless the database is this writer's own fresh one, any message past its acceptance.
        const seen = this.seen.has(hash53(key));
        if (seen || (!this.fresh && event.type !== 'MessageAccepted')) {
          missing.set(key, { organizationId: event.metadata.organizationId, messageId: event.data.messageId });
        } else if (event.type === 'MessageAccepted') {
          arriving.add(key);
        }
      }
      const loaded = missing.size > 0 ? await this.load([...missing.values()]) : [];
      for (const row of loaded) working.set(keyOf(row.organization_id, row.message_id), row);

      const states = new Map<string, MessageState>();
      const changed = new Set<string>();
      const eventRows: MessageEventRow[] = [];
      let orphans = 0;
      for (let i = 0; i < items.length; i++) {
        // A large batch is work for a while: let the event loop breathe (sockets, timers, heartbeats).
        if (i > 0 && i % 5000 === 0) await yieldToEventLoop();
        const { event, position } = items[i]!;
        const key = keys[i]!;
        let row = working.get(key);
        // A second MessageAccepted of a message already recorded (a keyed send retried after its first
        // attempt landed) is the same message: no second row, no second Accepted event.
        if (row && event.type === 'MessageAccepted') continue;
        if (!row) {
          if (event.type !== 'MessageAccepted') {
            orphans++;
            continue;
          }
          const state = evolveMessage(initialMessageState(), event);
          row = acceptedRow(event, state);
          working.set(key, row);
          states.set(key, state);
          changed.add(key);
        } else if (event.type !== 'MessageAccepted') {
          const before = states.get(key) ?? stateOfRow(row);
          const after = evolveMessage(before, event);
          states.set(key, after);
          // The cache keeps the row as written until this batch is: change a copy (one per message and batch).
          const own = changed.has(key) ? row : { ...row };
          if (advanceRow(own, after, event)) {
            row = own;
            working.set(key, row);
            changed.add(key);
          }
        }
        eventRows.push(eventRow(event, row, position));
      }
      const messageRows = [...changed].map((key) => working.get(key)!);
      // Events first, then the messages' latest state: a reader that sees a message's status (say Delivered) then
      // also finds the events that led to it in its details.
      await this.insert('message_events', eventRows, EVENT_COLUMNS);
      await this.insert('messages', messageRows, MESSAGE_COLUMNS);
      if (this.seen.size + working.size > SEEN_LIMIT) {
        // Start over; a fresh database is then no longer known to hold only what this writer saw.
        this.seen.clear();
        this.fresh = false;
      }
      for (const [key, row] of working) {
        this.remember(key, row);
        this.seen.add(hash53(key));
      }
      this.options.onFlush?.({
        events: items.length,
        messageRows: messageRows.length,
        eventRows: eventRows.length,
        orphans,
        loaded: loaded.length,
        durationMs: Date.now() - started,
      });
    } catch (cause) {
      // Whatever failed (ClickHouse away, a refused insert), trying the batch again later may work.
      throw new InfrastructureError('ActivityWriteFailed', `writing activity failed: ${describeCause(cause)}`, {
        retriable: true,
        cause,
      });
    }
  }

  private async insert<R extends object>(
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
  private async load(wanted: { organizationId: string; messageId: string }[]): Promise<MessageRow[]> {
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

  /** A replay that swapped in rebuilt tables leaves a row in `activity_swaps`: rows in memory are then stale. */
  private async dropCacheAfterSwap(): Promise<void> {
    const [row] = await this.query<{ swaps: string }>(`SELECT count() AS swaps FROM ${this.db}.activity_swaps`);
    const swaps = Number(row?.swaps ?? 0);
    if (this.swapsSeen !== undefined && swaps !== this.swapsSeen) this.clearCache();
    this.swapsSeen = swaps;
  }

  private remember(key: string, row: MessageRow): void {
    if (row.completed_at_ms > 0) {
      // Every recipient has its final outcome: nothing more will change it, so it need not stay in memory.
      const done = this.cache.get(key);
      if (done) {
        this.cachedBytes -= done.weight;
        this.cache.delete(key);
      }
      return;
    }
    const old = this.cache.get(key);
    if (old) {
      this.cache.delete(key);
      if (old.row === row) {
        this.cache.set(key, old);
        return;
      }
      this.cachedBytes -= old.weight;
    }
    const weight = rowWeight(row);
    this.cache.set(key, { row, weight });
    this.cachedBytes += weight;
    while (this.cache.size > this.cacheRows || this.cachedBytes > this.cacheBytes) {
      const oldest = this.cache.entries().next();
      if (oldest.done) break;
      this.cachedBytes -= oldest.value[1].weight;
      this.cache.delete(oldest.value[0]);
    }
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
    track_opens: Number(row.track_opens),
    received_at: Math.floor(Number(row.received_at_ms) / 1000),
  };
}
