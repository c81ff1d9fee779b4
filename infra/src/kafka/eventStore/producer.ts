import { Partitioners, type IHeaders, type Kafka, type Producer, type ProducerRecord } from 'kafkajs';
import { ServiceUnavailableError } from '../../availability';
import { declaredRetriable, describeCause, InfrastructureError } from '../../errors';
import { sleep } from '../../retry';
import type { EventCodec } from '../../registry/codec';
import type { BrokerReachability } from '../reachability';
import type { Route } from '../routing';
import type { StoredEvent } from './events';

export interface EventProducerOptions {
  kafka: Kafka;
  codec: EventCodec;
  route: (event: StoredEvent) => Route;
  /** Whether any broker accepts connections: an append fails fast when none does (see `append`). */
  reachability: BrokerReachability;
  /** How long an append waits for the broker's acknowledgement before failing (the API answers 503 then). */
  appendTimeoutMs: number;
}

/**
 * The event store's writing side: appends events to their topics (idempotent producer, acks from all in-sync
 * replicas) by group commit, and sends the odd record outside it (a dead letter) through the same producer.
 */
export class EventProducer {
  private producer: Producer | undefined;
  private connecting: Promise<Producer> | undefined;
  private readonly queue: PendingAppend[] = [];
  private readonly partitionCounts = new Map<string, number>();
  private inFlight = false;

  constructor(private readonly options: EventProducerOptions) {}

  private connectedProducer(): Promise<Producer> {
    if (this.producer) return Promise.resolve(this.producer);
    this.connecting ??= (async () => {
      const producer = this.options.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        // Bounded, but longer than a leader election: a killed broker is fenced after 3 s (docs/services.md, "Kafka
        // with three brokers") and its partitions' new leaders are found on the next retry, so the API rides it out
        // (100 ms doubling to 1 s, about 7 s in all; the append's own timeout still answers 503 first).
        retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 },
        allowAutoTopicCreation: false,
        // Named, so kafkajs does not print its notice about the default partitioner (`send` places messages itself).
        createPartitioner: Partitioners.DefaultPartitioner,
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
      const { topic, key } = this.options.route(event);
      const value = await this.options.codec.encode(topic, event);
      messages.push({ topic, key, value, headers: { 'event-type': event.type, 'event-id': event.metadata.eventId } });
    }
    return this.appendRecords(messages);
  }

  /**
   * Appends records already encoded (an archiver copying events to another topic unchanged) through the same
   * group commit, with the same acknowledgement, timeout and fail-fast as `append`.
   */
  async appendRecords(messages: OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const acknowledged = new Promise<void>((resolve, reject) => {
      this.queue.push({ messages, resolve, reject });
      this.flush();
    });
    const appendTimeoutMs = this.options.appendTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new InfrastructureError('AppendTimeout', `Kafka did not acknowledge within ${appendTimeoutMs} ms`, {
              // The append may still land: the caller must not assume either way.
              retriable: false,
            }),
          ),
        appendTimeoutMs,
      );
    });
    // Fail fast when no broker accepts connections at all (Kafka is down): the caller answers 503 within a
    // second instead of waiting out the timeout. While any broker is reachable (a leader moving to another one),
    // the producer's retries go on, up to the timeout.
    let watchdog: NodeJS.Timeout | undefined;
    const unreachable = new Promise<never>((_, reject) => {
      watchdog = setInterval(() => {
        void this.options.reachability.anyReachable().then((reachable) => {
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

  /** Sends one record as it is, outside the group commit (a dead letter), acknowledged as the record asks. */
  async sendRecord(record: ProducerRecord): Promise<void> {
    const producer = await this.connectedProducer();
    await producer.send(record);
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
    const byTopic = new Map<string, OutgoingRecord[]>();
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
    const admin = this.options.kafka.admin();
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

  async disconnect(): Promise<void> {
    const producer = this.producer;
    this.producer = undefined;
    this.connecting = undefined;
    await producer?.disconnect();
  }
}

/** One record to append: its topic and key, its encoded event, its headers. */
export interface OutgoingMessage {
  topic: string;
  key: string;
  value: Buffer;
  headers: IHeaders;
}

type OutgoingRecord = Omit<OutgoingMessage, 'topic'>;

interface PendingAppend {
  messages: OutgoingMessage[];
  resolve(): void;
  reject(error: unknown): void;
}

/** How often a waiting append checks that some broker is reachable (the first check after this long). */
const UNREACHABLE_CHECK_MS = 250;

/** Attempts to connect a producer, and to send a batch that came back incomplete (see `send`). */
const CONNECT_ATTEMPTS = 5;
const RESEND_ATTEMPTS = 3;

/** Appends are grouped into produce requests of at most this many bytes (one larger event still goes alone). */
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;

const defaultPartitioner = Partitioners.DefaultPartitioner();
/** The partition kafkajs (and Java's client) would choose for a key: murmur2, positive, modulo the count. */
export function partitionOf(topic: string, key: string, partitions: number): number {
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
