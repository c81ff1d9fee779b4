import {
  Partitioners,
  type Consumer,
  type EachBatchPayload,
  type ITopicConfig,
  type Kafka,
  type KafkaMessage,
} from 'kafkajs';
import { isOutage } from '../../availability';
import { declaredRetriable } from '../../errors';
import type { EventCodec } from '../../registry/codec';
import { deadLetterRecord, deadLetterTopicConfig, deadLetterTopicOf, ensureTopics, MAX_EVENT_BYTES } from '../topics';
import { decodeBatch } from './decodeBatch';
import type { ConsumedEvent, StoredEvent } from './events';
import { positionNewGroup } from './groups';
import { withAdmin } from './kafka';

/**
 * The due-time consumer: records that each wait until a time (a delivery's next attempt, a webhook call's retry),
 * read from their topics and handed over once due. Beside `consume` (consumer.ts), for what that loop does not
 * offer: holding a record for minutes or hours, by pausing its partition until it is due and fetching it again
 * from there.
 *
 * What both settlements share:
 * - at least once: an offset is committed only once its record is settled (handled, dead-lettered, or passed over);
 * - decoding is the event store's (`decodeBatch`); the schema registry out of reach stops the batch there, and it
 *   is fetched again after a pause;
 * - a message that is no event of ours, or an event of another type than the topic's records, goes to the topic's
 *   dead-letter topic (the error in its headers) and is settled;
 * - records `accept` refuses (another organization's process) are passed over, settled;
 * - a paused partition is fetched again at the latest after a minute, whatever is due;
 * - `stop`: no timer fires after it; what was settled is committed (see each settlement).
 *
 * Two ways of settling a due record, chosen by the caller:
 *
 * - `in-batch` (the sender's retries): every record of a fetched batch already due is handed to `handle` and
 *   awaited within the batch (records of one `keyOf` in order, keys side by side); records not yet due are passed
 *   and waited for. The offset is committed up to the first record not done; records done beyond it are skipped when
 *   fetched again. `handle` failing with a retriable error (or a service out of reach): the record stays, the
 *   partition is fetched again after a pause (growing to a minute), later records of its key wait behind it. With
 *   any other error the record is dead-lettered and the partition moves on: an unknown failure is never retried
 *   blindly.
 * - `handed-off` (the webhooks' calls): records are taken in order and handed to the caller, who settles each when
 *   it is over (the consumer goes on fetching meanwhile, so a slow record never holds its partition; `busy` bounds
 *   how many are in hand). At the first record not yet due the partition is paused until it is: the records of one
 *   topic are due in the order they were appended (one delay per topic). Every second each partition commits up to
 *   its first record still in hand; a rebalance forgets what was in hand (its next owner reads it again from the
 *   commits). `stop` lets what is in hand settle (15 s at most) and commits it.
 */

/** The envelope every scheduled record shares: when it is due, which attempt it is. */
export interface ScheduledData {
  /** When the record is due, epoch milliseconds. */
  dueAt: number;
  /**
   * The attempt count it carries, as its record type says: a delivery retry counts the attempts that failed, a
   * webhook call's record is the attempt it makes.
   */
  attempt: number;
}

export type ScheduledRecord = StoredEvent & { data: ScheduledData };

interface ScheduledConsumeBase<R extends ScheduledRecord> {
  groupId: string;
  topics: string[];
  /** Configurations of topics the consumer creates first when missing (the topics' dead-letter topics always are). */
  topicConfigs?: ITopicConfig[];
  /** The topics' record type: any other event on them is dead-lettered. */
  isRecord: (event: StoredEvent) => event is R;
  /** Records this consumer is for (by organization); the others are passed over. Default: all. */
  accept?: (record: R) => boolean;
  startNewGroupAt: 'earliest' | 'latest';
  sessionTimeoutMs: number;
  /** How long a fetch waits for records (a paused partition is resumed by a timer; a short wait picks it up soon). */
  maxWaitTimeInMs: number;
  partitionsConsumedConcurrently?: number;
  now?: () => number;
  onError?: (error: unknown, record: R | undefined) => void;
}

export interface InBatchOptions<R extends ScheduledRecord> extends ScheduledConsumeBase<R> {
  settle: 'in-batch';
  /** Records of one key are handled in order; keys side by side. */
  keyOf: (record: R) => string;
  handle: (record: R) => Promise<void>;
}

/** One fetched batch in the caller's hands (`handed-off`). */
export interface HandOff<R> {
  /** Takes a due record; `settle` is called once it is over (its offset may then be committed). */
  take(record: R, settle: () => void): void;
  /** After the batch's last record was taken (before its partition is paused, if it is). */
  end(): Promise<void>;
}

export interface HandedOffOptions<R extends ScheduledRecord> extends ScheduledConsumeBase<R> {
  settle: 'handed-off';
  /** Opens a fetched batch: `records` are its records (due or not), read ahead in one round trip if need be. */
  begin: (records: readonly R[]) => Promise<HandOff<R>>;
  /** No room for another record: the batch waits (heartbeating) until `freed` resolves or a second passed. */
  busy: () => boolean;
  freed: () => Promise<unknown>;
  /** At stop: resolves once every record in hand is settled (waited for 15 s at most). */
  drain: () => Promise<void>;
}

export type ScheduledConsumeOptions<R extends ScheduledRecord> = InBatchOptions<R> | HandedOffOptions<R>;

export interface RunningScheduledConsumer {
  consumer: Consumer;
  stop(): Promise<void>;
}

/** What the scheduled consumer uses of the event store. */
export interface ScheduledConsumerContext {
  kafka: Kafka;
  codec: Pick<EventCodec, 'decode'>;
}

/** The longest a paused partition waits before it is fetched again, whatever is due. */
const MAX_HOLD_MS = 60_000;
/** How often `handed-off` commits what was settled. */
const COMMIT_INTERVAL_MS = 1000;
/** How long `handed-off` waits at stop for what is in hand. */
const DRAIN_MS = 15_000;

/** Runs a due-time consumer over `options.topics` as group `options.groupId` (see above). */
export async function consumeScheduled<R extends ScheduledRecord>(
  context: ScheduledConsumerContext,
  options: ScheduledConsumeOptions<R>,
): Promise<RunningScheduledConsumer> {
  const { topics } = options;
  const consumer = context.kafka.consumer({
    groupId: options.groupId,
    maxBytesPerPartition: MAX_EVENT_BYTES,
    maxBytes: MAX_EVENT_BYTES * 2,
    sessionTimeout: options.sessionTimeoutMs,
    heartbeatInterval: 3000,
    maxWaitTimeInMs: options.maxWaitTimeInMs,
    retry: { retries: 10 },
    allowAutoTopicCreation: false,
  });
  await withAdmin(context.kafka, (admin) =>
    ensureTopics(admin, [...(options.topicConfigs ?? []), ...topics.map(deadLetterTopicConfig)]),
  );
  await positionNewGroup(context, options.groupId, topics, options.startNewGroupAt);
  const producer = context.kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    // Named, so kafkajs does not print its notice about the default partitioner.
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });

  const shared: Shared<R> = {
    context,
    options,
    consumer,
    now: options.now ?? Date.now,
    stopped: false,
    timers: new Set(),
    deadLetter: async (topic, message, error) => {
      await producer.send({
        topic: deadLetterTopicOf(topic),
        acks: -1,
        messages: [deadLetterRecord(topic, message, error, 1, options.groupId)],
      });
    },
    hold: (pause, ms) => {
      const resume = pause();
      const timer = setTimeout(() => {
        shared.timers.delete(timer);
        if (!shared.stopped) resume();
      }, ms);
      shared.timers.add(timer);
    },
  };
  const loop = options.settle === 'in-batch' ? inBatch(shared, options) : handedOff(shared, options);

  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    ...(options.partitionsConsumedConcurrently !== undefined && {
      partitionsConsumedConcurrently: options.partitionsConsumedConcurrently,
    }),
    eachBatch: loop.eachBatch,
  });

  return {
    consumer,
    stop: async () => {
      shared.stopped = true;
      for (const timer of shared.timers) clearTimeout(timer);
      await loop.beforeDisconnect();
      await consumer.disconnect();
      await producer.disconnect();
    },
  };
}

/** What both settlements use. */
interface Shared<R extends ScheduledRecord> {
  context: ScheduledConsumerContext;
  options: ScheduledConsumeOptions<R>;
  consumer: Consumer;
  now: () => number;
  stopped: boolean;
  timers: Set<NodeJS.Timeout>;
  /** Sends a message to its topic's dead-letter topic, the error in its headers. */
  deadLetter: (topic: string, message: KafkaMessage, error: unknown) => Promise<void>;
  /** Pauses the batch's partition for `ms` (no resume after stop). */
  hold: (pause: () => () => void, ms: number) => void;
}

interface Loop {
  eachBatch: (payload: EachBatchPayload) => Promise<void>;
  /** At stop, once no timer fires any more. */
  beforeDisconnect: () => Promise<void>;
}

/** A decoded item: settled already (undecodable, unexpected, passed over), or a record for the loop. */
type Sorted<R> = { record: R; message: KafkaMessage } | { record: undefined; message: KafkaMessage };

/**
 * The decoded item's record, or undefined once it is settled here: undecodable (dead-lettered while decoding), of
 * another type (dead-lettered now), or refused by `accept`.
 */
async function sortItem<R extends ScheduledRecord>(
  shared: Shared<R>,
  topic: string,
  { event, message }: ConsumedEvent,
): Promise<Sorted<R>> {
  if (!event) return { record: undefined, message };
  const { options } = shared;
  if (!options.isRecord(event)) {
    const error = new Error(`unexpected event ${event.type} on ${topic}`);
    options.onError?.(error, undefined);
    await shared.deadLetter(topic, message, error);
    return { record: undefined, message };
  }
  if (options.accept && !options.accept(event)) return { record: undefined, message };
  return { record: event, message };
}

function inBatch<R extends ScheduledRecord>(shared: Shared<R>, options: InBatchOptions<R>): Loop {
  const { consumer, now } = shared;
  /** Offsets handled out of order in this session, per partition, so a re-fetch skips them. */
  const doneAhead = new Map<string, Set<string>>();
  const failures = new Map<string, number>();
  const countFailure = (slot: string, offset: string) =>
    failures.set(`${slot}:${offset}`, (failures.get(`${slot}:${offset}`) ?? 0) + 1);

  const eachBatch = async ({ batch, resolveOffset, heartbeat, pause, isRunning, isStale }: EachBatchPayload) => {
    const { topic, partition } = batch;
    const slot = `${partition}:${topic}`;
    const ahead = doneAhead.get(slot) ?? new Set<string>();
    doneAhead.set(slot, ahead);
    const done = new Set<string>();
    const waiting: number[] = [];
    let retryLater = false;

    type Due = { message: KafkaMessage; record: R };
    const due: Due[] = [];
    for (const message of batch.messages) if (ahead.has(message.offset)) done.add(message.offset);
    const { items } = await decodeBatch(
      { topic, partition, messages: batch.messages.filter((message) => !ahead.has(message.offset)) },
      {
        codec: shared.context.codec,
        onOutage: async (error, _outages, message) => {
          options.onError?.(error, undefined);
          // The registry out of reach: this record and the ones after it are fetched again after a pause.
          retryLater = true;
          countFailure(slot, message.offset);
          return false;
        },
        onUndecodable: async (message, error) => {
          options.onError?.(error, undefined);
          await shared.deadLetter(topic, message, error);
          done.add(message.offset);
        },
      },
    );
    for (const item of items) {
      if (!item.event) continue; // dead-lettered while decoding
      const { record, message } = await sortItem(shared, topic, item);
      if (!record) {
        done.add(message.offset);
        continue;
      }
      if (record.data.dueAt <= now()) due.push({ message, record });
      else waiting.push(record.data.dueAt);
    }

    // Records of one key in order; keys side by side.
    const byKey = new Map<string, Due[]>();
    for (const item of due)
      byKey.set(options.keyOf(item.record), [...(byKey.get(options.keyOf(item.record)) ?? []), item]);
    const beat = setInterval(() => void heartbeat().catch(() => undefined), 3000);
    try {
      await Promise.all(
        [...byKey.values()].map(async (items) => {
          for (const { message, record } of items) {
            if (!isRunning() || isStale()) return;
            try {
              await options.handle(record);
              done.add(message.offset);
              failures.delete(`${slot}:${message.offset}`);
            } catch (error) {
              options.onError?.(error, record);
              // Retriable, or a service out of reach (Redis, Kafka): tried again later, never dead-lettered for that.
              if (declaredRetriable(error) === true || isOutage(error)) {
                retryLater = true;
                countFailure(slot, message.offset);
                return; // later records of this key wait for this one
              }
              await shared.deadLetter(topic, message, error);
              done.add(message.offset);
            }
          }
        }),
      );
    } finally {
      clearInterval(beat);
    }
    // Stopping: what was handled is still committed; what was not is handed back.
    if (isStale()) return;

    // Commit up to the first record not done; remember the ones done beyond it.
    let committedUpTo: string | undefined;
    let contiguous = true;
    for (const message of batch.messages) {
      if (contiguous && done.has(message.offset)) {
        committedUpTo = message.offset;
        ahead.delete(message.offset);
      } else {
        contiguous = false;
        if (done.has(message.offset)) ahead.add(message.offset);
      }
    }
    if (committedUpTo !== undefined) {
      resolveOffset(committedUpTo);
      // A failed commit (a rebalance, a stop) only means these records are fetched again and skipped.
      await consumer
        .commitOffsets([{ topic, partition, offset: (BigInt(committedUpTo) + 1n).toString() }])
        .catch((error: unknown) => options.onError?.(error, undefined));
    }
    if (isRunning()) await heartbeat().catch(() => undefined);
    if (!contiguous && isRunning()) {
      const attempts = Math.max(0, ...[...failures.values()]);
      const backoff = retryLater ? Math.min(MAX_HOLD_MS, 500 * 2 ** Math.min(attempts, 7)) : MAX_HOLD_MS;
      const nextDue = waiting.length > 0 ? Math.max(0, Math.min(...waiting) - now()) : MAX_HOLD_MS;
      shared.hold(pause, Math.min(backoff, nextDue, MAX_HOLD_MS));
    }
  };

  return { eachBatch, beforeDisconnect: async () => undefined };
}

/** Offsets of one partition in hand, in order; which are settled. */
class PartitionTrack {
  readonly offsets: bigint[] = [];
  readonly settled = new Set<bigint>();

  add(offset: bigint): void {
    this.offsets.push(offset);
  }
  settle(offset: bigint): void {
    this.settled.add(offset);
  }
  /** The offset to commit (one past the last settled record of the leading run), if it moved. */
  advance(): bigint | undefined {
    let last: bigint | undefined;
    while (this.offsets.length > 0 && this.settled.has(this.offsets[0]!)) {
      last = this.offsets.shift()!;
      this.settled.delete(last);
    }
    return last === undefined ? undefined : last + 1n;
  }
}

function handedOff<R extends ScheduledRecord>(shared: Shared<R>, options: HandedOffOptions<R>): Loop {
  const { consumer, now } = shared;
  let tracks = new Map<string, PartitionTrack>();
  // A new generation (a rebalance): what this member held may be someone else's now; it starts from the commits.
  consumer.on(consumer.events.GROUP_JOIN, () => {
    tracks = new Map();
  });

  const commit = async () => {
    const offsets: { topic: string; partition: number; offset: string }[] = [];
    for (const [slot, track] of tracks) {
      const next = track.advance();
      if (next === undefined) continue;
      const colon = slot.indexOf(':');
      offsets.push({ topic: slot.slice(colon + 1), partition: Number(slot.slice(0, colon)), offset: next.toString() });
    }
    if (offsets.length === 0) return;
    // A failed commit (a rebalance, a stop) only means these records are fetched again and skipped or made again.
    await consumer.commitOffsets(offsets).catch((error: unknown) => options.onError?.(error, undefined));
  };
  const committer = setInterval(() => void commit(), COMMIT_INTERVAL_MS);

  const eachBatch = async ({ batch, resolveOffset, heartbeat, pause, isRunning, isStale }: EachBatchPayload) => {
    const { topic, partition } = batch;
    const slot = `${partition}:${topic}`;
    const track = tracks.get(slot) ?? new PartitionTrack();
    tracks.set(slot, track);
    let holdFor: number | undefined;
    const { items, complete } = await decodeBatch(
      { topic, partition, messages: batch.messages },
      {
        codec: shared.context.codec,
        onOutage: async (error) => {
          options.onError?.(error, undefined);
          return false;
        },
        onUndecodable: async (message, error) => {
          options.onError?.(error, undefined);
          await shared.deadLetter(topic, message, error);
        },
      },
    );
    if (!complete) holdFor = 1000;
    const handOff = await options.begin(
      items.flatMap(({ event }) => (event && options.isRecord(event) ? [event as R] : [])),
    );
    for (const item of items) {
      if (!isRunning() || isStale()) return;
      const offset = BigInt(item.message.offset);
      const { event } = item;
      if (event && options.isRecord(event) && event.data.dueAt > now()) {
        holdFor = event.data.dueAt - now();
        break;
      }
      // Room for it, or wait (heartbeating) for one in hand to settle: bounded memory.
      while (options.busy()) {
        await Promise.race([options.freed(), new Promise((r) => setTimeout(r, 1000))]);
        await heartbeat().catch(() => undefined);
        if (!isRunning() || isStale()) return;
      }
      resolveOffset(item.message.offset);
      track.add(offset);
      const settle = () => track.settle(offset);
      const { record } = await sortItem(shared, topic, item);
      if (!record) {
        settle();
        continue;
      }
      handOff.take(record, settle);
    }
    await handOff.end();
    await heartbeat().catch(() => undefined);
    if (holdFor !== undefined && isRunning() && !isStale()) {
      shared.hold(pause, Math.max(10, Math.min(holdFor, MAX_HOLD_MS)));
    }
  };

  return {
    eachBatch,
    beforeDisconnect: async () => {
      clearInterval(committer);
      // No new batch; what is in hand settles (bounded by the caller), then its offsets are committed while the
      // member is still in its group.
      consumer.pause(options.topics.map((topic) => ({ topic })));
      await Promise.race([options.drain(), new Promise((r) => setTimeout(r, DRAIN_MS))]);
      await commit();
    },
  };
}
