import {
  evolveMessage,
  initialMessageState,
  MESSAGE_EVENT_TYPES,
  type MessageEvent,
  type MessageState,
} from '@sendline/domain';
import { InfrastructureError, describeCause } from '../../errors';
import type { ClickHouseClient } from '../../clickhouse/client';
import { MessageCache, messageKey } from './messageCache';
import {
  acceptedRow,
  advanceRow,
  eventRow,
  stateOfRow,
  type MessageEventRow,
  type MessageRow,
  type SourcePosition,
} from './rows';
import { ActivityTables } from './tables';
import { EVENT_COLUMNS, MESSAGE_COLUMNS } from './tabSeparated';

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

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

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
  private readonly tables: ActivityTables;
  private readonly maxEvents: number;
  private readonly maxDelayMs: number;
  private readonly cache: MessageCache;
  private swapsSeen: number | undefined;
  private forgetBeforeNextBatch = false;
  private buffer: Pending | undefined;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  /** The flushes sealed and not finished, oldest first (each settles without rejecting). */
  private readonly flushes: Promise<void>[] = [];
  private inFlightEvents = 0;
  private closed = false;
  /**
   * With `freshDatabase`, a message this writer has not seen is not in the database at all. (A message it
   * has not seen needs no read-back when its MessageAccepted comes: its other events follow it in its partition.)
   */
  private fresh: boolean;

  constructor(
    client: ClickHouseClient,
    database: string,
    private readonly options: ActivityWriterOptions = {},
  ) {
    this.tables = new ActivityTables(client, database);
    this.maxEvents = options.maxEvents ?? 5000;
    this.maxDelayMs = options.maxDelayMs ?? 500;
    this.cache = new MessageCache(options.cacheRows ?? 20_000, options.cacheBytes ?? 128 * 1024 * 1024);
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
  }

  /**
   * Forgets the rows held in memory now and once more before the next batch is written (a batch being written as
   * this is called remembers its rows when it is done): after a rebalance, the partitions this writer's consumer holds
   * may have been another process's, whose writes the rows in memory do not show.
   */
  forgetRows(): void {
    this.cache.clear();
    this.forgetBeforeNextBatch = true;
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
      if (this.forgetBeforeNextBatch) {
        this.forgetBeforeNextBatch = false;
        this.cache.clear();
      }
      const working = new Map<string, MessageRow>();
      const missing = new Map<string, { organizationId: string; messageId: string }>();
      const arriving = new Set<string>();
      const keys = items.map(({ event }) => messageKey(event.metadata.organizationId, event.data.messageId));
      for (let i = 0; i < items.length; i++) {
        const event = items[i]!.event;
        const key = keys[i]!;
        if (working.has(key) || missing.has(key) || arriving.has(key)) continue;
        const cached = this.cache.row(key);
        if (cached) {
          working.set(key, cached);
          continue;
        }
        // Not in memory. Read it back if it may be in ClickHouse: a message seen before (then dropped from
        // memory), or, unless the database is this writer's own fresh one, any message past its acceptance.
        const seen = this.cache.hasSeen(key);
        if (seen || (!this.fresh && event.type !== 'MessageAccepted')) {
          missing.set(key, { organizationId: event.metadata.organizationId, messageId: event.data.messageId });
        } else if (event.type === 'MessageAccepted') {
          arriving.add(key);
        }
      }
      const loaded = missing.size > 0 ? await this.tables.load([...missing.values()]) : [];
      for (const row of loaded) working.set(messageKey(row.organization_id, row.message_id), row);

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
      await this.tables.insert('message_events', eventRows, EVENT_COLUMNS);
      await this.tables.insert('messages', messageRows, MESSAGE_COLUMNS);
      // The set of messages seen started over: a fresh database is then no longer known to hold only what this
      // writer saw.
      if (this.cache.rememberBatch(working)) this.fresh = false;
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

  /** A replay that swapped in rebuilt tables leaves a row in `activity_swaps`: rows in memory are then stale. */
  private async dropCacheAfterSwap(): Promise<void> {
    const swaps = await this.tables.swaps();
    if (this.swapsSeen !== undefined && swaps !== this.swapsSeen) this.clearCache();
    this.swapsSeen = swaps;
  }
}
