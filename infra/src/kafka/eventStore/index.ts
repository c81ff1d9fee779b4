/**
 * The event store on Kafka, one job per file:
 *
 * - `producer.ts`: appends (idempotent producer, acks from all in-sync replicas, group commit, a batch sent again
 *   whole when a partition did not acknowledge it, fail-fast when no broker is reachable);
 * - `consumer.ts`: the consumer loop (at-least-once, a failing batch split into single events, outages waited
 *   out, dead letters, a view's own positions);
 * - `scheduled.ts`: the due-time consumer (records held until due: a partition paused until then; settled in the
 *   batch, or handed off and committed once settled), beside `consume`;
 * - `groups.ts`: where a consumer group that never committed starts (`positionNewGroup`: earliest or latest);
 * - `reader.ts`: one-off reads for a replay (`readAll`, `readRange`) and of one event (`readAt`);
 * - `positions.ts`: what the loop asks of a handler that keeps its own position (its store implements it, its
 *   caller passes it in: the event store knows no view);
 * - `decodeBatch.ts`: a fetched batch decoded into events, the one way every consumer does it;
 * - `kafka.ts`: the kafkajs client and its log lines; `events.ts`: the shapes of what is stored and read.
 *
 * The topics themselves (names, configurations, dead-letter topics, their creation) and the routing of an event
 * to its topic and key are beside this folder (`../topics.ts`, `../routing.ts`). `EventStore` composes the parts.
 */
import type { ITopicConfig, Kafka, logLevel } from 'kafkajs';
import type { ServiceAddresses } from '../../config';
import { EventCodec } from '../../registry/codec';
import { BrokerReachability } from '../reachability';
import { routeEvent, type Route } from '../routing';
import {
  defaultTopicNames,
  ensureTopics,
  topicPartitionMismatches,
  type PartitionMismatch,
  type TopicNames,
} from '../topics';
import { consume, type ConsumeOptions, type RunningConsumer } from './consumer';
import type { ConsumedEvent, StoredEvent } from './events';
import { createKafka, withAdmin } from './kafka';
import { EventProducer, type OutgoingMessage } from './producer';
import { EventReader, type OffsetRanges } from './reader';
import {
  consumeScheduled,
  type RunningScheduledConsumer,
  type ScheduledConsumeOptions,
  type ScheduledRecord,
} from './scheduled';

export type { ConsumeOptions, RunningConsumer } from './consumer';
export { slotKey, StoreBehindError, type BatchRange, type ConsumerPositions } from './positions';
export {
  decodeBatch,
  decodedEvents,
  type DecodeBatchOptions,
  type DecodedBatch,
  type MessageBatch,
} from './decodeBatch';
export type { ConsumedEvent, EventPosition, StoredEvent } from './events';
export { positionNewGroup } from './groups';
export type {
  HandedOffOptions,
  HandOff,
  InBatchOptions,
  RunningScheduledConsumer,
  ScheduledConsumeOptions,
  ScheduledData,
  ScheduledRecord,
} from './scheduled';
export { createKafka, withAdmin } from './kafka';
export type { OffsetRanges } from './reader';
export type { OutgoingMessage } from './producer';

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
 * The event store: appends events to their topics (idempotent producer, acks from
 * all in-sync replicas, group commit) and runs handlers over topics as
 * consumer groups with at-least-once processing.
 */
export class EventStore {
  readonly kafka: Kafka;
  readonly codec: EventCodec;
  readonly topics: TopicNames;
  /** Whether any broker accepts connections: an append fails fast when none does (see `append`). */
  readonly reachability: BrokerReachability;
  private readonly producer: EventProducer;
  private readonly reader: EventReader;

  constructor(options: EventStoreOptions) {
    this.kafka = createKafka(options.brokers, options.clientId, options.logLevel);
    this.codec = new EventCodec(options.registryUrl);
    this.topics = options.topics ?? defaultTopicNames;
    this.reachability = new BrokerReachability(options.brokers);
    this.producer = new EventProducer({
      kafka: this.kafka,
      codec: this.codec,
      route: (event) => this.route(event),
      reachability: this.reachability,
      appendTimeoutMs: options.appendTimeoutMs ?? 10_000,
    });
    this.reader = new EventReader(this.kafka, this.codec);
  }

  /** The event store of the configured services: their brokers, schema registry and topic names. */
  static at(
    addresses: ServiceAddresses,
    clientId: string,
    options: Pick<EventStoreOptions, 'appendTimeoutMs' | 'logLevel'> = {},
  ): EventStore {
    return new EventStore({
      brokers: addresses.kafkaBrokers,
      registryUrl: addresses.schemaRegistryUrl,
      clientId,
      topics: addresses.topics,
      ...options,
    });
  }

  route(event: StoredEvent): Route {
    return routeEvent(event, this.topics);
  }

  /**
   * Appends events, grouped by topic, in one request; resolves only when every
   * in-sync replica acknowledged them. Events of one key keep their order.
   */
  append(events: StoredEvent[]): Promise<void> {
    return this.producer.append(events);
  }

  /**
   * Appends records already encoded (an event copied unchanged to another topic), acknowledged as `append` is.
   * Records of one key keep their order.
   */
  appendRecords(records: OutgoingMessage[]): Promise<void> {
    return this.producer.appendRecords(records);
  }

  /** Creates the topics that do not exist yet; leaves existing ones as they are. */
  ensureTopics(configs: ITopicConfig[]): Promise<void> {
    return withAdmin(this.kafka, (admin) => ensureTopics(admin, configs));
  }

  /** The existing topics among `configs` whose partition count is not the configured one. */
  partitionMismatches(configs: ITopicConfig[]): Promise<PartitionMismatch[]> {
    return withAdmin(this.kafka, (admin) => topicPartitionMismatches(admin, configs));
  }

  /** Runs a handler over topics as a consumer group, at least once (see `consume` in consumer.ts). */
  consume(options: ConsumeOptions): Promise<RunningConsumer> {
    return consume({ kafka: this.kafka, codec: this.codec, producer: this.producer }, options);
  }

  /**
   * Runs a due-time consumer over topics of scheduled records (a delivery's next attempt, a webhook call's retry):
   * each record held until due, then settled in its batch or handed off (see `consumeScheduled` in scheduled.ts).
   */
  consumeScheduled<R extends ScheduledRecord>(options: ScheduledConsumeOptions<R>): Promise<RunningScheduledConsumer> {
    return consumeScheduled({ kafka: this.kafka, codec: this.codec }, options);
  }

  /** Reads topics from the beginning up to the end they had when the call started (see reader.ts). */
  readAll(
    topics: string[],
    handleBatch: (events: ConsumedEvent[]) => Promise<void>,
    onProgress?: (read: number, total: number) => void,
  ): Promise<number> {
    return this.reader.readAll(topics, handleBatch, onProgress);
  }

  /** Reads the events in [from, to) of each partition given (see reader.ts). */
  readRange(
    ranges: OffsetRanges,
    handle: (items: ConsumedEvent<StoredEvent>[]) => Promise<void>,
    timeoutMs?: number,
  ): Promise<number> {
    return this.reader.readRange(ranges, handle, timeoutMs);
  }

  /** The one event at an offset of a partition (see reader.ts). */
  readAt(topic: string, partition: number, offset: bigint, timeoutMs?: number): Promise<StoredEvent | undefined> {
    return this.reader.readAt(topic, partition, offset, timeoutMs);
  }

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }
}
