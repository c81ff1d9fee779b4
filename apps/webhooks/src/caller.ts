import { Partitioners, type Consumer, type EachBatchPayload, type KafkaMessage } from 'kafkajs';
import {
  deadLetterRecord,
  deadLetterTopicConfig,
  deadLetterTopicOf,
  decodeBatch,
  MAX_EVENT_BYTES,
  attemptEventIdOf,
  isWebhookCallScheduled,
  positionNewGroup,
  webhookCallTopicConfig,
  webhookRetryTopic,
  type EventStore,
  type WebhookCallScheduled,
} from '@sendline/infra';
import { EndpointPool } from './pool';

/**
 * The consumer of the call topics (webhooks.calls and webhooks.calls.retry-<n>): hands every due call to the
 * endpoint pool and goes on fetching without waiting for it, so a slow endpoint never holds the partition.
 *
 * At least once: a record's offset is committed only once its attempt settled (answered, or its next attempt
 * appended, or given up) — and the records before it in its partition too: every second, each partition commits
 * up to its first record still in hand. A crash makes the records after that point again (the calls already
 * answered are skipped by their `answered` mark; the others go out again with the same Webhook-Id).
 *
 * Waiting: the records of one retry topic all wait the same delay, so they come due in the order they were
 * appended. At the first record not yet due the partition is paused until it is, and fetched again from there.
 *
 * A webhook backed up (`queueLimit` calls waiting already that would take more than a few seconds to go out at its
 * pace: a slow or dead endpoint, pool.ts): its next calls are set aside on retry-1, attempt unchanged, instead of
 * filling the memory and holding back the commits of everyone else's calls. The calls of a fetched batch set aside
 * leave in one append (a round trip for all of them, not one each).
 */
export interface CallerOptions {
  store: EventStore;
  groupId: string;
  /** How many retry topics there are (the retry schedule's length). */
  retries: number;
  /** The first retry's delay: how long a call set aside waits. */
  setAsideDelayMs: number;
  /**
   * `answered`: whether `answered` (below) found the call answered already; undefined when not asked. `called`:
   * to be called once the HTTP call is over, which frees the endpoint's slot while the attempt is recorded.
   */
  perform: (record: WebhookCallScheduled, answered: boolean | undefined, called: () => void) => Promise<unknown>;
  /** The calls of a fetched batch already answered, read at once (one round trip per batch, not per call). */
  answered?: (records: readonly WebhookCallScheduled[]) => Promise<Set<string>>;
  /** Calls this caller is for (by organization); the others are passed over. Default: all. */
  accept?: (record: WebhookCallScheduled) => boolean;
  startNewGroupAt: 'earliest' | 'latest';
  sessionTimeoutMs: number;
  perEndpointConcurrency: number;
  maxInFlight: number;
  perEndpointQueue: number;
  partitions?: number;
  now?: () => number;
  onError?: (error: unknown, record: WebhookCallScheduled | undefined) => void;
}

export interface RunningCaller {
  consumer: Consumer;
  pool: EndpointPool;
  stop(): Promise<void>;
}

/** Offsets of one partition in hand, in order; which are settled. */
class PartitionTrack {
  readonly offsets: bigint[] = [];
  readonly settled = new Set<bigint>();
  committed: bigint | undefined;

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

const COMMIT_INTERVAL_MS = 1000;
const MAX_HOLD_MS = 60_000;

export async function startCaller(options: CallerOptions): Promise<RunningCaller> {
  const { store } = options;
  const now = options.now ?? Date.now;
  const calls = store.topics.webhookCalls;
  const topics = [calls, ...Array.from({ length: options.retries }, (_, i) => webhookRetryTopic(store.topics, i + 1))];
  await store.ensureTopics([
    ...topics.map((topic) => webhookCallTopicConfig(topic, options.partitions)),
    ...topics.map(deadLetterTopicConfig),
  ]);
  await positionNewGroup(store, options.groupId, topics, options.startNewGroupAt);

  const pool = new EndpointPool(options.perEndpointConcurrency, options.maxInFlight, options.perEndpointQueue);
  const consumer = store.kafka.consumer({
    groupId: options.groupId,
    maxBytesPerPartition: MAX_EVENT_BYTES,
    maxBytes: MAX_EVENT_BYTES * 2,
    sessionTimeout: options.sessionTimeoutMs,
    heartbeatInterval: 3000,
    maxWaitTimeInMs: 100,
    retry: { retries: 10 },
    allowAutoTopicCreation: false,
  });
  const producer = store.kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });

  let stopped = false;
  let tracks = new Map<string, PartitionTrack>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopped) fn();
    }, ms);
    timers.add(timer);
  };
  // A new generation (a rebalance): what this member held may be someone else's now; it starts from the commits.
  consumer.on(consumer.events.GROUP_JOIN, () => {
    tracks = new Map();
  });

  const commit = async () => {
    const offsets: { topic: string; partition: number; offset: string }[] = [];
    for (const [slot, track] of tracks) {
      const next = track.advance();
      if (next === undefined) continue;
      const [topic, partition] = splitSlot(slot);
      offsets.push({ topic, partition, offset: next.toString() });
      track.committed = next;
    }
    if (offsets.length === 0) return;
    // A failed commit (a rebalance, a stop) only means these records are fetched again and skipped or made again.
    await consumer.commitOffsets(offsets).catch((error: unknown) => options.onError?.(error, undefined));
  };
  const committer = setInterval(() => void commit(), COMMIT_INTERVAL_MS);

  const deadLetter = (topic: string, message: KafkaMessage, error: unknown) =>
    producer.send({
      topic: deadLetterTopicOf(topic),
      acks: -1,
      messages: [deadLetterRecord(topic, message, error, 1, options.groupId)],
    });

  /** Runs an attempt in its endpoint's turn; an attempt that throws (Kafka or Redis away) is tried again later. */
  /**
   * Attempts past their HTTP call, being recorded: out of their endpoint's slot (the slot is for calls to the
   * endpoint, not for our round trips), still in hand until settled; at most `maxInFlight` at once.
   */
  let recording = 0;
  const recorded: (() => void)[] = [];
  const busy = () => pool.busy() || recording >= options.maxInFlight;

  /** Runs an attempt in its endpoint's turn; an attempt that throws (Kafka or Redis away) is tried again later. */
  const run = (record: WebhookCallScheduled, answered: boolean | undefined, settle: () => void, failures = 0) => {
    const endpoint = `${record.metadata.organizationId}/${record.data.webhookId}`;
    pool.submit(
      endpoint,
      () =>
        new Promise<void>((freeSlot) => {
          let called = false;
          const afterCall = () => {
            if (called) return;
            called = true;
            recording++;
            freeSlot();
          };
          const done = () => {
            if (called) {
              recording--;
              for (const wake of recorded.splice(0)) wake();
            }
            freeSlot();
          };
          // Tried again after a throw: read afresh.
          options.perform(record, failures === 0 ? answered : undefined, afterCall).then(
            () => {
              done();
              settle();
            },
            (error: unknown) => {
              done();
              options.onError?.(error, record);
              later(Math.min(MAX_HOLD_MS, 500 * 2 ** Math.min(failures, 7)), () =>
                run(record, undefined, settle, failures + 1),
              );
            },
          );
        }),
    );
  };

  /** Appends the calls set aside, each due after the first retry's delay, then settles them. */
  const setAside = async (records: readonly { record: WebhookCallScheduled; settle: () => void }[]) => {
    if (records.length === 0) return;
    const at = now();
    await store.append(
      records.map(({ record }) => ({
        type: 'WebhookCallScheduled' as const,
        data: { ...record.data, retry: 1, dueAt: at + options.setAsideDelayMs },
        metadata: {
          ...record.metadata,
          eventId: attemptEventIdOf(record.data.callId, record.data.attempt, `set aside at ${at}`),
          occurredAt: at,
        },
      })),
    );
    for (const { settle } of records) settle();
  };

  const eachBatch = async ({ batch, resolveOffset, heartbeat, pause, isRunning, isStale }: EachBatchPayload) => {
    const { topic, partition } = batch;
    const slot = `${partition}:${topic}`;
    const track = tracks.get(slot) ?? new PartitionTrack();
    tracks.set(slot, track);
    let holdFor: number | undefined;
    const { items, complete } = await decodeBatch(
      { topic, partition, messages: batch.messages },
      {
        codec: store.codec,
        onOutage: async (error) => {
          options.onError?.(error, undefined);
          return false;
        },
        onUndecodable: async (message, error) => {
          options.onError?.(error, undefined);
          await deadLetter(topic, message, error);
        },
      },
    );
    if (!complete) holdFor = 1000;
    const calls = items.flatMap(({ event }) => (event && isWebhookCallScheduled(event) ? [event] : []));
    // Unread (Redis away): each call reads its own mark when its turn comes.
    const answered = await options.answered?.(calls).catch(() => undefined);
    // Left unsettled when the batch is abandoned (a rebalance, a stop): fetched again from the last commit.
    const asides: { record: WebhookCallScheduled; settle: () => void }[] = [];
    for (const { event, message } of items) {
      if (!isRunning() || isStale()) return;
      const offset = BigInt(message.offset);
      if (event && isWebhookCallScheduled(event) && event.data.dueAt > now()) {
        holdFor = event.data.dueAt - now();
        break;
      }
      // Room for it, or wait (heartbeating) for a call to finish: bounded memory, a fair share for every endpoint.
      while (busy()) {
        await Promise.race([
          pool.finished(),
          new Promise<void>((r) => recorded.push(r)),
          new Promise((r) => setTimeout(r, 1000)),
        ]);
        await heartbeat().catch(() => undefined);
        if (!isRunning() || isStale()) return;
      }
      resolveOffset(message.offset);
      track.add(offset);
      const settle = () => track.settle(offset);
      if (!event) {
        settle(); // dead-lettered while decoding
        continue;
      }
      if (!isWebhookCallScheduled(event)) {
        await deadLetter(topic, message, new Error(`unexpected event ${event.type} on ${topic}`));
        settle();
        continue;
      }
      if (options.accept && !options.accept(event)) {
        settle();
        continue;
      }
      const endpoint = `${event.metadata.organizationId}/${event.data.webhookId}`;
      if (options.retries > 0 && pool.backedUp(endpoint)) {
        asides.push({ record: event, settle });
        continue;
      }
      run(event, answered?.has(event.data.callId), settle);
    }
    // Kafka out of reach: they wait in their queue instead (settled when made), rather than holding the commits.
    await setAside(asides).catch((error: unknown) => {
      options.onError?.(error, undefined);
      for (const { record, settle } of asides) run(record, answered?.has(record.data.callId), settle);
    });
    await heartbeat().catch(() => undefined);
    if (holdFor !== undefined && isRunning() && !isStale()) {
      const resume = pause();
      later(Math.max(10, Math.min(holdFor, MAX_HOLD_MS)), resume);
    }
  };

  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: 6,
    eachBatch,
  });

  return {
    consumer,
    pool,
    stop: async () => {
      stopped = true;
      clearInterval(committer);
      for (const timer of timers) clearTimeout(timer);
      // No new batch; what is in flight finishes (bounded by the call timeout), then its offsets are committed
      // while the member is still in its group.
      consumer.pause(topics.map((topic) => ({ topic })));
      const settledAll = async () => {
        await pool.idle();
        while (recording > 0) await new Promise<void>((r) => recorded.push(r));
      };
      await Promise.race([settledAll(), new Promise((r) => setTimeout(r, 15_000))]);
      await commit();
      await consumer.disconnect();
      await producer.disconnect();
    },
  };
}

function splitSlot(slot: string): [string, number] {
  const colon = slot.indexOf(':');
  return [slot.slice(colon + 1), Number(slot.slice(0, colon))];
}
