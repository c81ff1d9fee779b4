import type { MessageState } from '@sendline/domain';
import { sqlString } from '../../../clickhouse/client';
import type { ActivityQueries } from './query';
import { stateOfRow, utcDay, type MessageRow } from '../rows';

/** A message as the mail that comes back about it needs it: accepted, with its organization and recipients. */
export type ReturnedMessageState = Exclude<MessageState, { phase: 'Initial' }>;

export interface ReturnedMessagesOptions {
  /** The days (UTC, today included) read first; a message not found there is looked for in the older ones. */
  recentDays?: number;
  now?: () => number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Where the messages that mail came back about stand, read from the activity store (the messages of the last 30
 * days, the store's retention): the organization, the active recipients in the order of MessageAccepted (a
 * return-path token names a recipient by that index) and each one's status. The returns reader decides on it.
 *
 * A view, so it may be behind the log by a moment: a report about a message the projector has not written yet is
 * not found (the reader tries it again later), and a recipient's status may be older than its last event. The
 * reader's event ids are derived from what they record, so a decision made twice on an older status appends the
 * same event again, which every reader takes for one.
 *
 * A token names a message by its id alone, and the table is ordered by organization first: a lookup reads every
 * message id of the days it reads (1,000,000 messages over 30 days: 60–100 ms a lookup on a 2-core machine; 10 ms for
 * the last two days' 38,000). Most mail comes back within minutes of the delivery, so the days of the last
 * `recentDays` (default 2: today and yesterday, UTC) are read first, the others skipped by their partition; only the
 * ids not found there are looked for in the older days. A message's rows are all in its own day (its `received_at`'s).
 * The ids are a PREWHERE: the other columns are read only where an id matched (ClickHouse 18.16 did not move the
 * condition there by itself; a lookup of 40 ids cost 6.6 ms of its CPU over the last two days, 4.0 with the PREWHERE,
 * and 79 against 30 ms over the 29 older days).
 *
 * One lookup at a time: the ids asked for while one is read wait for it, then go together in the next (the reader's
 * partitions each ask for their batch's at about the same time). ClickHouse spends milliseconds of CPU on a query
 * whatever its size (4 ms for 40 ids over the last two days, 0.5 for a SELECT 1), and the reader would otherwise ask
 * one for every batch.
 */
export class ReturnedMessages {
  private readonly recentDays: number;
  private readonly now: () => number;
  private pending: PendingLookup[] = [];
  private reading = false;

  constructor(
    private readonly queries: ActivityQueries,
    options: ReturnedMessagesOptions = {},
  ) {
    this.recentDays = options.recentDays ?? 2;
    this.now = options.now ?? Date.now;
  }

  /** The state of each message found, by message id (read with the other lookups waiting at the same time). */
  states(messageIds: readonly string[]): Promise<Map<string, ReturnedMessageState>> {
    if (messageIds.length === 0) return Promise.resolve(new Map());
    return new Promise((resolve, reject) => {
      this.pending.push({ ids: messageIds, resolve, reject });
      if (!this.reading) this.readPending();
    });
  }

  /** Reads every lookup waiting, in one go; then the ones that came meanwhile. */
  private readPending(): void {
    const lookups = this.pending;
    this.pending = [];
    this.reading = true;
    void this.readAll([...new Set(lookups.flatMap((lookup) => lookup.ids))])
      .then(
        (found) => {
          for (const { ids, resolve } of lookups) {
            const mine = new Map<string, ReturnedMessageState>();
            for (const id of ids) {
              const state = found.get(id);
              if (state) mine.set(id, state);
            }
            resolve(mine);
          }
        },
        (error: unknown) => lookups.forEach((lookup) => lookup.reject(error)),
      )
      .finally(() => {
        this.reading = false;
        if (this.pending.length > 0) this.readPending();
      });
  }

  /** The recent days in one query, the older in one more if need be. */
  private async readAll(ids: readonly string[]): Promise<Map<string, ReturnedMessageState>> {
    const found = new Map<string, ReturnedMessageState>();
    const signal = this.queries.deadline();
    const since = sqlString(utcDay(this.now() - (this.recentDays - 1) * DAY_MS));
    await this.read(ids, `day >= ${since}`, signal, found);
    const older = ids.filter((id) => !found.has(id));
    if (older.length > 0) await this.read(older, `day < ${since}`, signal, found);
    return found;
  }

  private async read(
    ids: readonly string[],
    days: string,
    signal: AbortSignal,
    found: Map<string, ReturnedMessageState>,
  ): Promise<void> {
    const rows = await this.queries.query<
      Pick<MessageRow, 'organization_id' | 'message_id' | 'phase' | 'recipients' | 'recipient_statuses'> &
        Partial<Pick<MessageRow, 'suppressed_recipients'>>
    >(
      'SELECT message_id, argMax(organization_id, version) AS organization_id, argMax(phase, version) AS phase, ' +
        'argMax(recipients, version) AS recipients, argMax(recipient_statuses, version) AS recipient_statuses, ' +
        'argMax(suppressed_recipients, version) AS suppressed_recipients ' +
        `FROM ${this.queries.db}.messages PREWHERE message_id IN (${ids.map(sqlString).join(', ')}) WHERE ${days} ` +
        'GROUP BY message_id',
      signal,
    );
    for (const row of rows) {
      const state = stateOfRow({ suppressed_recipients: [], ...row } as MessageRow);
      if (state.phase !== 'Initial') found.set(row.message_id, state);
    }
  }
}

interface PendingLookup {
  ids: readonly string[];
  resolve(found: Map<string, ReturnedMessageState>): void;
  reject(error: unknown): void;
}
