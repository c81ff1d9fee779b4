import { Partitioners, type Consumer, type EachBatchPayload, type KafkaMessage } from 'kafkajs';
import {
  deadLetterRecord,
  decodeBatch,
  deadLetterTopicConfig,
  deadLetterTopicOf,
  declaredRetriable,
  isOutage,
  MAX_EVENT_BYTES,
  positionNewGroup,
  type EventStore,
} from '@sendline/infra';
import { isDeliveryRetryScheduled, type DeliveryRetryScheduled } from './retryRecord';

/**
 * The consumer of the retry schedule (email.delivery-retries): holds each record until it is due, then
 * hands it to `handle`, and commits a record's offset only after `handle` returned (the retry's outcome
 * appended). It reads with kafkajs directly rather than through EventStore.consume, because holding a
 * record for minutes or hours needs what that loop does not offer: pausing a partition and resuming it
 * at a time, and leaving records unresolved so they are fetched again. It decodes a batch as that loop
 * does (`decodeBatch`).
 *
 * In one fetched batch, every record already due is handled (records of one message in order, others
 * side by side); the offset is committed up to the first record not yet done; if some records wait,
 * the partition is paused until the earliest of them is due and fetched again from there. Records
 * handled out of order (due, behind one that waits) are fetched again too and skipped: the sender's
 * ledger says their attempt was made. So a record waits behind a later-due one only beyond one fetch
 * (up to 20 MB of records per partition).
 *
 * `handle` failing with a retriable error: the record stays, the partition is retried after a pause
 * (growing to a minute). With any other error: the record goes to the topic's dead-letter topic (the
 * error in its headers) and the partition moves on — an unknown failure is never retried blindly.
 */

export interface RetryConsumerOptions {
  store: EventStore;
  groupId: string;
  topic: string;
  handle: (record: DeliveryRetryScheduled) => Promise<void>;
  /** Records this consumer is for (by organization); the others are passed over. Default: all. */
  accept?: (record: DeliveryRetryScheduled) => boolean;
  startNewGroupAt: 'earliest' | 'latest';
  sessionTimeoutMs: number;
  now?: () => number;
  onError?: (error: unknown, record: DeliveryRetryScheduled | undefined) => void;
}

export interface RunningRetryConsumer {
  consumer: Consumer;
  stop(): Promise<void>;
}

/** The longest a paused partition waits before it is fetched again, whatever is due. */
const MAX_HOLD_MS = 60_000;

export async function startRetryConsumer(options: RetryConsumerOptions): Promise<RunningRetryConsumer> {
  const { store, topic } = options;
  const now = options.now ?? Date.now;
  const consumer = store.kafka.consumer({
    groupId: options.groupId,
    maxBytesPerPartition: MAX_EVENT_BYTES,
    maxBytes: MAX_EVENT_BYTES * 2,
    sessionTimeout: options.sessionTimeoutMs,
    heartbeatInterval: 3000,
    // A paused partition is resumed by a timer; a short fetch wait picks it up soon after.
    maxWaitTimeInMs: 500,
    retry: { retries: 10 },
    allowAutoTopicCreation: false,
  });
  await store.ensureTopics([deadLetterTopicConfig(topic)]);
  await positionNewGroup(store, options.groupId, [topic], options.startNewGroupAt);
  const producer = store.kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    // Named, so kafkajs does not print its notice about the default partitioner.
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });

  let stopped = false;
  const timers = new Set<NodeJS.Timeout>();
  /** Offsets handled out of order in this session, per partition, so a re-fetch skips them. */
  const doneAhead = new Map<number, Set<string>>();
  const failures = new Map<string, number>();
  const countFailure = (partition: number, offset: string) =>
    failures.set(`${partition}:${offset}`, (failures.get(`${partition}:${offset}`) ?? 0) + 1);

  const deadLetter = async (message: KafkaMessage, error: unknown) => {
    await producer.send({
      topic: deadLetterTopicOf(topic),
      acks: -1,
      messages: [deadLetterRecord(topic, message, error, 1, options.groupId)],
    });
  };

  const eachBatch = async ({ batch, resolveOffset, heartbeat, pause, isRunning, isStale }: EachBatchPayload) => {
    const partition = batch.partition;
    const ahead = doneAhead.get(partition) ?? new Set<string>();
    doneAhead.set(partition, ahead);
    const done = new Set<string>();
    const waiting: number[] = [];
    let retryLater = false;

    type Due = { message: KafkaMessage; record: DeliveryRetryScheduled };
    const due: Due[] = [];
    for (const message of batch.messages) if (ahead.has(message.offset)) done.add(message.offset);
    const { items } = await decodeBatch(
      { topic, partition, messages: batch.messages.filter((message) => !ahead.has(message.offset)) },
      {
        codec: store.codec,
        onOutage: async (error, _outages, message) => {
          options.onError?.(error, undefined);
          // The registry out of reach: this record and the ones after it are fetched again after a pause.
          retryLater = true;
          countFailure(partition, message.offset);
          return false;
        },
        onUndecodable: async (message, error) => {
          options.onError?.(error, undefined);
          await deadLetter(message, error);
          done.add(message.offset);
        },
      },
    );
    for (const { event, message } of items) {
      if (!event) continue; // dead-lettered while decoding
      if (!isDeliveryRetryScheduled(event)) {
        const error = new Error(`unexpected event ${event.type} on ${topic}`);
        options.onError?.(error, undefined);
        await deadLetter(message, error);
        done.add(message.offset);
        continue;
      }
      if (options.accept && !options.accept(event)) {
        done.add(message.offset);
        continue;
      }
      if (event.data.dueAt <= now()) due.push({ message, record: event });
      else waiting.push(event.data.dueAt);
    }

    // Records of one message in order; messages side by side.
    const byMessage = new Map<string, Due[]>();
    for (const item of due)
      byMessage.set(item.record.data.messageId, [...(byMessage.get(item.record.data.messageId) ?? []), item]);
    const beat = setInterval(() => void heartbeat().catch(() => undefined), 3000);
    try {
      await Promise.all(
        [...byMessage.values()].map(async (items) => {
          for (const { message, record } of items) {
            if (!isRunning() || isStale()) return;
            try {
              await options.handle(record);
              done.add(message.offset);
              failures.delete(`${partition}:${message.offset}`);
            } catch (error) {
              options.onError?.(error, record);
              // Retriable, or a service out of reach (Redis, Kafka): tried again later, never dead-lettered for that.
              if (declaredRetriable(error) === true || isOutage(error)) {
                retryLater = true;
                countFailure(partition, message.offset);
                return; // later records of this message wait for this one
              }
              await deadLetter(message, error);
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
      const wait = Math.min(backoff, nextDue, MAX_HOLD_MS);
      const resume = pause();
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!stopped) resume();
      }, wait);
      timers.add(timer);
    }
  };

  await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch });

  return {
    consumer,
    stop: async () => {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      await consumer.disconnect();
      await producer.disconnect();
    },
  };
}
