import {
  Kafka,
  logLevel,
  Partitioners,
  type logCreator,
  type Admin,
  type Consumer,
  type EachBatchPayload,
  type IHeaders,
  type ITopicConfig,
  type KafkaMessage,
  type Producer,
} from 'kafkajs';
import { randomUUID } from 'node:crypto';
import { isOutage, ServiceUnavailableError } from '../availability';
import { declaredRetriable, describeCause, InfrastructureError } from '../errors';
import { backoffDelay, sleep, type RetryOptions } from '../retry';
import { EventCodec, type EncodableEvent } from '../registry/codec';
import { BrokerReachability } from './reachability';
import { routeEvent, type Route, type RoutableEvent } from './routing';
import { slotKey, ViewBehindError, type BatchRange } from '../views/positions';
import {
  deadLetterRecord,
  deadLetterTopicConfig,
  deadLetterTopicOf,
  defaultTopicNames,
  MAX_EVENT_BYTES,
  type TopicNames,
} from './topics';

export type StoredEvent = EncodableEvent & RoutableEvent;

/** Where an event was read from. */
export interface EventPosition {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
}

export interface EventStoreOptions {
  brokers: string[];
  registryUrl: string;
  clientId: string;
  topics?: TopicNames;
  /** How long an append waits for the broker's acknowledgement before failing (the API answers 503 then). */
  appendTimeoutMs?: number;
  logLevel?: logLevel;
}

/**
 * kafkajs's log lines as one JSON line each on stderr. One warning is dropped on
 * purpose: the producer's retries are bounded so that an append the broker does
 * not acknowledge fails (and the API answers 503) instead of hanging forever.
 */
const logCreator: logCreator = () => (entry) => {
  if (entry.log.message.startsWith('Limiting retries for the idempotent producer')) return;
  const { message, ...rest } = entry.log;
  process.stderr.write(
    `${JSON.stringify({ level: entry.label, logger: 'kafkajs', namespace: entry.namespace, message, ...rest })}\n`,
  );
};

export function createKafka(brokers: string[], clientId: string, level: logLevel = logLevel.WARN): Kafka {
  return new Kafka({
    clientId,
    brokers,
    logLevel: level,
    logCreator,
    retry: { initialRetryTime: 100, retries: 8 },
    connectionTimeout: 3000,
  });
}

// kafkajs prints a notice about its partitioner at every producer start unless told which one is meant.
process.env.KAFKAJS_NO_PARTITIONER_WARNING ??= '1';

/**
 * The event store: appends events to their topics (idempotent producer, acks from
 * all in-sync replicas, one batch per call) and runs handlers over topics as
 * consumer groups with at-least-once processing.
 */
export class EventStore {
  readonly kafka: Kafka;
  readonly codec: EventCodec;
  readonly topics: TopicNames;
  private producer: Producer | undefined;
  private connecting: Promise<Producer> | undefined;
  private readonly appendTimeoutMs: number;
  /** Whether any broker accepts connections: an append fails fast when none does (see `append`). */
  readonly reachability: BrokerReachability;
  private readonly queue: PendingAppend[] = [];
  private readonly partitionCounts = new Map<string, number>();
  private inFlight = false;

  constructor(private readonly options: EventStoreOptions) {
    this.kafka = createKafka(options.brokers, options.clientId, options.logLevel);
    this.codec = new EventCodec(options.registryUrl);
    this.topics = options.topics ?? defaultTopicNames;
    this.appendTimeoutMs = options.appendTimeoutMs ?? 10_000;
    this.reachability = new BrokerReachability(options.brokers);
  }

  route(event: StoredEvent): Route {
    return routeEvent(event, this.topics);
  }

  private connectedProducer(): Promise<Producer> {
    if (this.producer) return Promise.resolve(this.producer);
    this.connecting ??= (async () => {
      const producer = this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        // Bounded, but longer than a leader election: a killed broker is fenced after 3 s (README, "Kafka with
        // three brokers") and its partitions' new leaders are found on the next retry, so the API rides it out
        // (100 ms doubling to 1 s, about 7 s in all; the append's own timeout still answers 503 first).
        retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 },
        allowAutoTopicCreation: false,
      });
      // A connect may ask a broker that just died (kafkajs asks the one the metadata names as controller for
      // its producer id, and that may be the dead one until it is fenced): try a few times.
      for (let attempt = 1; ; attempt++) {
        try {
          await producer.connect();
          break;
        } catch (error) {
          if (attempt >= CONNECT_ATTEMPTS) throw error;
          await producer.disconnect().catch(() => undefined);
          await sleep(Math.min(200 * 2 ** (attempt - 1), 1000));
        }
      }
      this.producer = producer;
      return producer;
    })().catch((cause: unknown) => {
      this.connecting = undefined;
      throw new InfrastructureError('KafkaUnavailable', `cannot connect to Kafka: ${describeCause(cause)}`, {
        retriable: true,
        cause,
      });
    });
    return this.connecting;
  }

  /**
   * Appends events, grouped by topic, in one request; resolves only when every
   * in-sync replica acknowledged them. Events of one key keep their order.
   */
  async append(events: StoredEvent[]): Promise<void> {
    if (events.length === 0) return;
    const messages: OutgoingMessage[] = [];
    for (const event of events) {
      const { topic, key } = this.route(event);
      const value = await this.codec.encode(topic, event);
      messages.push({ topic, key, value, headers: { 'event-type': event.type, 'event-id': event.metadata.eventId } });
    }
    const acknowledged = new Promise<void>((resolve, reject) => {
      this.queue.push({ messages, resolve, reject });
      this.flush();
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new InfrastructureError('AppendTimeout', `Kafka did not acknowledge within ${this.appendTimeoutMs} ms`, {
              // The append may still land: the caller must not assume either way.
              retriable: false,
            }),
          ),
        this.appendTimeoutMs,
      );
    });
    // Fail fast when no broker accepts connections at all (Kafka is down): the caller answers 503 within a
    // second instead of waiting out the timeout. While any broker is reachable (a leader moving to another one),
    // the producer's retries go on, up to the timeout.
    let watchdog: NodeJS.Timeout | undefined;
    const unreachable = new Promise<never>((_, reject) => {
      watchdog = setInterval(() => {
        void this.reachability.anyReachable().then((reachable) => {
          if (reachable) return;
          reject(
            new ServiceUnavailableError('kafka', 'no Kafka broker is reachable', {
              // The append may still land once a broker is back: the caller must not assume either way.
              retriable: false,
            }),
          );
        });
      }, UNREACHABLE_CHECK_MS);
    });
    try {
      await Promise.race([acknowledged, timeout, unreachable]);
    } finally {
      clearTimeout(timer);
      clearInterval(watchdog);
    }
  }

  /**
   * Group commit: one produce request is in flight at a time; appends that arrive
   * meanwhile wait and go together in the next request. Order per key is kept
   * (requests are sequential, and messages keep their order inside one), the
   * idempotent producer never has two requests racing on a partition, and many
   * concurrent single appends cost a few requests instead of one each.
   */
  private flush(): void {
    if (this.inFlight || this.queue.length === 0) return;
    const taken: PendingAppend[] = [];
    let bytes = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0]!;
      const size = next.messages.reduce((sum, m) => sum + m.value.length, 0);
      if (taken.length > 0 && bytes + size > MAX_REQUEST_BYTES) break;
      taken.push(this.queue.shift()!);
      bytes += size;
    }
    this.inFlight = true;
    const byTopic = new Map<string, { key: string; value: Buffer; headers: IHeaders }[]>();
    for (const append of taken) {
      for (const { topic, ...message } of append.messages) {
        const list = byTopic.get(topic) ?? [];
        list.push(message);
        byTopic.set(topic, list);
      }
    }
    void this.send([...byTopic].map(([topic, messages]) => ({ topic, messages })))
      .then(
        () => taken.forEach((append) => append.resolve()),
        (cause: unknown) => {
          const error =
            cause instanceof InfrastructureError
              ? cause
              : new InfrastructureError('AppendFailed', `Kafka refused the append: ${describeCause(cause)}`, {
                  retriable: declaredRetriable(cause) ?? false,
                  cause,
                });
          taken.forEach((append) => append.reject(error));
        },
      )
      .finally(() => {
        this.inFlight = false;
        this.flush();
      });
  }

  /**
   * Sends one produce batch and checks that every partition it wrote to acknowledged it. Each message's
   * partition is chosen here (kafkajs's default partitioner: murmur2 of the key, as Java's), because kafkajs's
   * retry after a leader change skips the partitions whose new leader had already answered for others, and
   * reports success. A send that fails, or comes back without a partition, is sent again whole by a new
   * producer (a few times): what had landed is then appended twice, with the same event ids, which every
   * reader takes for one event; nothing acknowledged is missing.
   */
  private async send(topicMessages: { topic: string; messages: OutgoingRecord[] }[]): Promise<void> {
    const expected = new Set<string>();
    const batch: { topic: string; messages: (OutgoingRecord & { partition: number })[] }[] = [];
    for (const { topic, messages } of topicMessages) {
      const partitions = await this.partitionCount(topic);
      const placed = messages.map((message) => ({
        ...message,
        partition: partitionOf(topic, message.key, partitions),
      }));
      for (const message of placed) expected.add(`${topic}:${message.partition}`);
      batch.push({ topic, messages: placed });
    }
    for (let attempt = 1; ; attempt++) {
      const producer = await this.connectedProducer();
      try {
        const acknowledged = await producer.sendBatch({ acks: -1, topicMessages: batch });
        const seen = new Set(acknowledged.map((r) => `${r.topicName}:${r.partition}`));
        const missing = [...expected].filter((slot) => !seen.has(slot));
        if (missing.length === 0) return;
        throw new InfrastructureError('AppendIncomplete', `Kafka did not acknowledge ${missing.join(', ')}`, {
          retriable: true,
        });
      } catch (error) {
        this.discardProducer(producer);
        const incomplete = error instanceof InfrastructureError && error.code === 'AppendIncomplete';
        if (!incomplete || attempt >= RESEND_ATTEMPTS) throw error;
      }
    }
  }

  /** Partitions of a topic, read once (the key → partition mapping must not change under a running app). */
  private async partitionCount(topic: string): Promise<number> {
    const known = this.partitionCounts.get(topic);
    if (known !== undefined) return known;
    const admin = this.kafka.admin();
    try {
      await admin.connect();
      const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
      const count = metadata.topics[0]?.partitions.length ?? 0;
      if (count === 0) throw new Error(`topic ${topic} has no partitions`);
      this.partitionCounts.set(topic, count);
      return count;
    } catch (cause) {
      throw new InfrastructureError('KafkaUnavailable', `cannot read ${topic}'s partitions: ${describeCause(cause)}`, {
        retriable: true,
        cause,
      });
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }

  /**
   * Drops the producer after a failed send, so the next append starts a new one. kafkajs's idempotent producer
   * advances a partition's sequence number only on success; after a failure whose records did land (a leader
   * killed after they were replicated), its next batch reuses their sequence numbers, and the broker then
   * refuses every later append to that partition (OutOfOrderSequence) or takes a batch of the same size for a
   * duplicate and acknowledges it without writing it. A new producer has a new producer id and fresh sequences.
   */
  private discardProducer(producer: Producer): void {
    if (this.producer !== producer) return;
    this.producer = undefined;
    this.connecting = undefined;
    void producer.disconnect().catch(() => undefined);
  }

  /** Creates the topics that do not exist yet; leaves existing ones as they are. */
  async ensureTopics(configs: ITopicConfig[]): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      await ensureTopics(admin, configs);
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * Runs `handle` over the topics as consumer group `groupId`, one batch at a time,
   * at least once: a batch's offsets are committed only after `handle` returned.
   * A batch that keeps failing is split into single events; an event that still
   * fails after `maxAttempts` (or fails with a non-retriable error) goes to the
   * topic's dead-letter topic with the error, and the partition moves on.
   */
  async consume(options: ConsumeOptions): Promise<RunningConsumer> {
    const consumer = this.kafka.consumer({
      groupId: options.groupId,
      maxBytesPerPartition: MAX_EVENT_BYTES,
      maxBytes: MAX_EVENT_BYTES * 2,
      sessionTimeout: options.sessionTimeoutMs ?? 30_000,
      heartbeatInterval: 3000,
      retry: { retries: 10 },
      allowAutoTopicCreation: false,
    });
    await this.ensureTopics(options.topics.map(deadLetterTopicConfig));
    await consumer.connect();
    await consumer.subscribe({ topics: options.topics, fromBeginning: options.fromBeginning ?? true });
    const retryOptions: RetryOptions = {
      maxAttempts: options.maxAttempts ?? 5,
      initialDelayMs: options.initialRetryDelayMs ?? 200,
      maxDelayMs: options.maxRetryDelayMs ?? 10_000,
    };
    const retryUnknown = options.retryUnknownErrors ?? true;
    const isRetriable = (error: unknown) => declaredRetriable(error) ?? retryUnknown;
    const stopping = new AbortController();

    // A handler that keeps its position with its data (a Redis view) is where each partition resumes: right after
    // the last event its store holds, not at the group's committed offset (which may be past writes the store lost).
    const positions = options.positions;
    /** Partitions assigned to this member now (from the last join). */
    let assigned: { topic: string; partition: number }[] = [];
    /** Where a partition was last sought to, until its next batch: Kafka may start later (retention). */
    const sought = new Map<string, bigint>();
    const seekTo = (topic: string, partition: number, offset: bigint) => {
      sought.set(slotKey(topic, partition), offset);
      consumer.seek({ topic, partition, offset: String(offset) });
    };
    /** Seeks every assigned partition to its store's position (at start, after a rebalance, after a store restart). */
    const resync = async () => {
      if (!positions) return;
      const offsets: { topic: string; partition: number; offset: string }[] = [];
      for (const { topic, partition } of assigned) {
        const applied = await positions.applied(topic, partition);
        if (applied !== null) offsets.push({ topic, partition, offset: String(applied + 1n) });
        seekTo(topic, partition, applied === null ? 0n : applied + 1n);
      }
      // The group's offsets say the same (its lag, a replay waiting for it), also for a partition that gets no new
      // event: a view written just before a crash is ahead of what the group had committed.
      if (offsets.length > 0) await consumer.commitOffsets(offsets).catch(() => undefined);
    };
    if (positions) {
      consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
        assigned = Object.entries(payload.memberAssignment).flatMap(([topic, partitions]) =>
          partitions.map((partition) => ({ topic, partition })),
        );
        // Without the store (down now), each batch's guard still finds out where the view is.
        void resync().catch(() => undefined);
      });
    }

    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 1,
      eachBatch: heartbeating(async (payload: EachBatchPayload) => {
        const { batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, uncommittedOffsets, isRunning, isStale } =
          payload;
        /** Waits out a dependency's outage (heartbeating); false when the consumer is stopping. */
        const waitOutOutage = async (outages: number): Promise<boolean> => {
          await sleep(Math.min(OUTAGE_MAX_WAIT_MS, 200 * 2 ** Math.min(outages, 5)), stopping.signal);
          if (!isRunning() || isStale()) return false;
          await heartbeat();
          return true;
        };
        // A seek is pending for this partition: this batch was fetched before it and goes nowhere.
        if (positions && isStale()) return;
        const slot = slotKey(batch.topic, batch.partition);
        const fetchedOffset = (batch as { fetchedOffset?: string }).fetchedOffset ?? batch.firstOffset() ?? '0';
        // The batch holds every event of the partition from where it was fetched; after a seek Kafka starts
        // later only when the events in between are gone (retention), so the batch is complete from the seek on.
        const soughtTo = sought.get(slot);
        sought.delete(slot);
        const from = soughtTo !== undefined && BigInt(fetchedOffset) > soughtTo ? String(soughtTo) : fetchedOffset;
        const lastOffset = batch.messages.at(-1)?.offset;
        /** The handler's store is behind this batch: go back to where it is, drop the batch, commit nothing. */
        const behind = (error: unknown): boolean => {
          if (!(error instanceof ViewBehindError)) return false;
          seekTo(error.topic, error.partition, error.nextOffset);
          return true;
        };
        const items: ConsumedEvent[] = [];
        for (const message of batch.messages) {
          const position = {
            topic: batch.topic,
            partition: batch.partition,
            offset: message.offset,
            key: keyOf(message),
          };
          for (let outages = 0; ; outages++) {
            try {
              if (!message.value)
                throw new InfrastructureError('EmptyValue', 'the message has no value', { retriable: false });
              items.push({ event: (await this.codec.decode(message.value)) as StoredEvent, position, message });
            } catch (error) {
              // The registry out of reach: wait for it (a good event is never dead-lettered for that).
              if (isOutage(error)) {
                if (await waitOutOutage(outages)) continue;
                return;
              }
              // Undecodable: no handler can ever take it.
              await this.deadLetter(batch.topic, message, error, 0);
              items.push({ event: undefined, position, message });
            }
            break;
          }
        }
        const decoded = items.filter(
          (item): item is ConsumedEvent & { event: StoredEvent } => item.event !== undefined,
        );
        const commitUpTo = async (offset: string) => {
          resolveOffset(offset);
          // With autoCommit off and no interval or threshold, kafkajs commits only offsets handed to it explicitly.
          await commitOffsetsIfNecessary(uncommittedOffsets());
          await heartbeat();
        };
        if (decoded.length > 0 && options.handleBatch) {
          for (let outages = 0; ; outages++) {
            try {
              await options.handleBatch(decoded, {
                topic: batch.topic,
                partition: batch.partition,
                from,
                to: lastOffset ?? decoded.at(-1)!.position.offset,
              });
              if (lastOffset) await commitUpTo(lastOffset);
              return;
            } catch (error) {
              if (behind(error)) return;
              if (!isRunning() || isStale()) return;
              options.onError?.(error, undefined);
              // A service out of reach: the whole batch waits for it and goes again.
              if (isOutage(error)) {
                if (await waitOutOutage(outages)) continue;
                return;
              }
              // Otherwise take the batch one event at a time, so one bad event cannot hold back the rest.
              break;
            }
          }
        }
        for (const item of items) {
          if (!isRunning() || isStale()) return;
          if (item.event) {
            const single = item as ConsumedEvent & { event: StoredEvent };
            for (let attempt = 1; ; attempt++) {
              try {
                if (options.handle) await options.handle(single);
                else if (options.handleBatch) {
                  const { topic, partition, offset } = single.position;
                  await options.handleBatch([single], { topic, partition, from: null, to: offset });
                }
                break;
              } catch (error) {
                if (behind(error)) return;
                options.onError?.(error, single);
                // A service out of reach does not count against the event: wait for it, then try again.
                if (isOutage(error)) {
                  if (!(await waitOutOutage(attempt))) return;
                  attempt--;
                  continue;
                }
                if (!isRetriable(error) || attempt >= retryOptions.maxAttempts) {
                  await this.deadLetter(batch.topic, item.message, error, attempt);
                  break;
                }
                await sleep(backoffDelay(attempt, retryOptions), stopping.signal);
                if (!isRunning() || isStale()) return;
                await heartbeat();
              }
            }
          }
          await commitUpTo(item.message.offset);
        }
        // Events dead-lettered or undecodable at the end of the batch: the store's position passes them too.
        // Should this write fail, the next batch finds the store behind and reads these events again: harmless.
        if (positions && lastOffset) {
          await positions.advance(batch.topic, batch.partition, lastOffset).catch((error: unknown) => {
            options.onError?.(error, undefined);
          });
        }
      }),
    });

    return {
      consumer,
      resync,
      stop: async () => {
        stopping.abort();
        await consumer.disconnect();
      },
    };
  }

  private async deadLetter(topic: string, message: KafkaMessage, error: unknown, attempts: number): Promise<void> {
    const producer = await this.connectedProducer();
    await producer.send({
      topic: deadLetterTopicOf(topic),
      acks: -1,
      messages: [deadLetterRecord(topic, message, error, attempts)],
    });
  }

  /**
   * Reads topics from the beginning up to the end they had when the call started
   * (for replay), in order per partition, with a throwaway consumer group.
   * `onProgress` receives the count read so far and the total to read.
   */
  async readAll(
    topics: string[],
    handleBatch: (events: ConsumedEvent[]) => Promise<void>,
    onProgress?: (read: number, total: number) => void,
  ): Promise<number> {
    const admin = this.kafka.admin();
    await admin.connect();
    const ends = new Map<string, bigint>();
    let total = 0n;
    try {
      for (const topic of topics) {
        for (const p of await admin.fetchTopicOffsets(topic)) {
          const end = BigInt(p.high);
          const start = BigInt(p.low);
          if (end > start) {
            ends.set(`${topic}:${p.partition}`, end);
            total += end - start;
          }
        }
      }
    } finally {
      await admin.disconnect();
    }
    if (ends.size === 0) return 0;
    const groupId = `replay-${randomUUID()}`;
    const consumer = this.kafka.consumer({
      groupId,
      maxBytesPerPartition: MAX_EVENT_BYTES,
      allowAutoTopicCreation: false,
    });
    let read = 0;
    let failure: unknown;
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: true });
    const done = new Promise<void>((resolve) => {
      void consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch, heartbeat }) => {
          const slot = `${batch.topic}:${batch.partition}`;
          const end = ends.get(slot);
          if (end === undefined || failure) return;
          const items: ConsumedEvent[] = [];
          for (const message of batch.messages) {
            if (BigInt(message.offset) >= end) break;
            if (!message.value) continue;
            const position = {
              topic: batch.topic,
              partition: batch.partition,
              offset: message.offset,
              key: keyOf(message),
            };
            try {
              items.push({ event: (await this.codec.decode(message.value)) as StoredEvent, position, message });
            } catch {
              // Undecodable events were dead-lettered by the live consumer; replay skips them the same way.
            }
          }
          try {
            if (items.length > 0) await handleBatch(items);
          } catch (error) {
            failure = error;
            resolve();
            return;
          }
          read += batch.messages.filter((m) => BigInt(m.offset) < end).length;
          onProgress?.(read, Number(total));
          await heartbeat();
          const last = batch.messages.at(-1);
          if (last && BigInt(last.offset) + 1n >= end) ends.delete(slot);
          if (ends.size === 0) resolve();
        },
      });
    });
    await done;
    await consumer.disconnect();
    const admin2 = this.kafka.admin();
    await admin2.connect();
    await admin2.deleteGroups([groupId]).catch(() => undefined);
    await admin2.disconnect();
    if (failure) throw failure;
    return read;
  }

  async disconnect(): Promise<void> {
    const producer = this.producer;
    this.producer = undefined;
    this.connecting = undefined;
    await producer?.disconnect();
  }
}

interface OutgoingMessage {
  topic: string;
  key: string;
  value: Buffer;
  headers: IHeaders;
}

interface PendingAppend {
  messages: OutgoingMessage[];
  resolve(): void;
  reject(error: unknown): void;
}

/** How often a waiting append checks that some broker is reachable (the first check after this long). */
const UNREACHABLE_CHECK_MS = 250;

/** A consumer waiting for a service out of reach tries again after 200 ms, doubling up to this. */
const OUTAGE_MAX_WAIT_MS = 2_000;

type OutgoingRecord = Omit<OutgoingMessage, 'topic'>;

/** Attempts to connect a producer, and to send a batch that came back incomplete (see `send`). */
const CONNECT_ATTEMPTS = 5;
const RESEND_ATTEMPTS = 3;

const defaultPartitioner = Partitioners.DefaultPartitioner();
/** The partition kafkajs (and Java's client) would choose for a key: murmur2, positive, modulo the count. */
function partitionOf(topic: string, key: string, partitions: number): number {
  return defaultPartitioner({
    topic,
    partitionMetadata: Array.from({ length: partitions }, (_, partitionId) => ({
      partitionId,
      leader: 0,
      partitionErrorCode: 0,
      replicas: [],
      isr: [],
    })),
    message: { key, value: null },
  });
}

/** Appends are grouped into produce requests of at most this many bytes (one larger event still goes alone). */
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;

export interface ConsumedEvent<E extends StoredEvent | undefined = StoredEvent | undefined> {
  event: E;
  position: EventPosition;
  message: KafkaMessage;
}

export interface ConsumeOptions {
  groupId: string;
  topics: string[];
  /** One event at a time. */
  handle?: (item: ConsumedEvent<StoredEvent>) => Promise<void>;
  /**
   * A whole batch at once (projectors writing in bulk); falls back to single events when it throws. `range` says
   * which partition the batch is of and which offsets it covers (for a handler that keeps its position). A
   * handler whose store is behind `range.from` throws ViewBehindError: the consumer seeks back to where the store
   * is and commits nothing.
   */
  handleBatch?: (items: ConsumedEvent<StoredEvent>[], range: BatchRange) => Promise<void>;
  /**
   * The handler's own positions (a view that keeps its position with its data): each assigned partition starts
   * right after the last event the store applied (from the beginning when it has none), not at the group's
   * committed offset.
   */
  positions?: ConsumerPositions;
  fromBeginning?: boolean;
  /** Attempts per event before it goes to the dead-letter topic (default 5). */
  maxAttempts?: number;
  initialRetryDelayMs?: number;
  maxRetryDelayMs?: number;
  /**
   * Whether an error that does not declare `retriable` is retried (default true).
   * The sender sets false: an unknown failure retried blindly is a duplicate email.
   */
  retryUnknownErrors?: boolean;
  partitionsConsumedConcurrently?: number;
  sessionTimeoutMs?: number;
  onError?: (error: unknown, item: ConsumedEvent<StoredEvent> | undefined) => void;
}

/** Where the handler's store stands, per partition (see ConsumeOptions.positions). */
export interface ConsumerPositions {
  /** The offset of the last event the store applied, or null when it holds none. */
  applied(topic: string, partition: number): Promise<bigint | null>;
  /** Records that every event up to `offset` was dealt with (dead-lettered or undecodable ones included). */
  advance(topic: string, partition: number, offset: string): Promise<void>;
}

export interface RunningConsumer {
  consumer: Consumer;
  /** Seeks every assigned partition to the store's position again (after the store restarted, say). */
  resync(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Heartbeats while a batch is handled. A handler that takes longer than the session timeout (the sender's SMTP
 * transactions for a large batch on a busy machine, e.g. after a broker's death held the partition back) is
 * otherwise evicted from its group: its commit fails, the batch is handled again, takes as long, and the
 * partition never moves on. kafkajs sends a heartbeat only when its interval has passed, so this costs little.
 */
function heartbeating(handler: (payload: EachBatchPayload) => Promise<void>) {
  return async (payload: EachBatchPayload): Promise<void> => {
    const beat = setInterval(() => void payload.heartbeat().catch(() => undefined), 1000);
    try {
      await handler(payload);
    } finally {
      clearInterval(beat);
    }
  };
}

function keyOf(message: KafkaMessage): string | null {
  return message.key ? message.key.toString('utf8') : null;
}

export async function ensureTopics(admin: Admin, configs: ITopicConfig[]): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = configs.filter((config) => !existing.has(config.topic));
  if (missing.length === 0) return;
  let refused: unknown;
  try {
    // Leaders are awaited below: with several brokers, kafkajs's own wait fails when it asks a broker that has
    // not heard of the new topic yet.
    await admin.createTopics({ topics: missing, waitForLeaders: false });
  } catch (error) {
    // Another process may have created one of them in the meantime: the wait below tells.
    refused = error;
  }
  const topics = missing.map((config) => config.topic);
  // A refused creation is waited on briefly (someone else's creation showing up), a successful one longer.
  const waitMs = refused ? 5_000 : 30_000;
  const deadline = Date.now() + waitMs;
  for (;;) {
    const metadata = await admin.fetchTopicMetadata({ topics }).catch(() => undefined);
    const led = metadata?.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0));
    if (led && metadata!.topics.length === topics.length) return;
    if (Date.now() > deadline) {
      throw refused ?? new Error(`the topics ${topics.join(', ')} have no leaders ${waitMs} ms after their creation`);
    }
    await sleep(100);
  }
}
