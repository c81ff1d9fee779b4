import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { isOutage } from '../../availability';
import { declaredRetriable, describeCause, InfrastructureError } from '../../errors';
import { backoffDelay, sleep, type RetryOptions } from '../../retry';
import type { EventCodec } from '../../registry/codec';
import { deadLetterRecord, deadLetterTopicConfig, deadLetterTopicOf, ensureTopics, MAX_EVENT_BYTES } from '../topics';
import { decodeBatch, decodedEvents, outageDelay } from './decodeBatch';
import type { ConsumedEvent, StoredEvent } from './events';
import { withAdmin } from './kafka';
import { slotKey, StoreBehindError, type BatchRange, type ConsumerPositions } from './positions';
import type { EventProducer } from './producer';

export interface ConsumeOptions {
  groupId: string;
  topics: string[];
  /** One event at a time. */
  handle?: (item: ConsumedEvent<StoredEvent>) => Promise<void>;
  /**
   * A whole batch at once (projectors writing in bulk); falls back to single events when it throws. `range` says
   * which partition the batch is of and which offsets it covers (for a handler that keeps its position). A
   * handler whose store is behind `range.from` throws StoreBehindError (a view's ViewBehindError): the consumer seeks back to where the store
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
   * Whether an error that does not declare `retriable` is retried. No default: every caller says it. The sender
   * says false (an unknown failure retried blindly is a duplicate email); a projector, whose writes are
   * idempotent, says true.
   */
  retryUnknownErrors: boolean;
  partitionsConsumedConcurrently?: number;
  /**
   * How long the offsets of a handled batch may wait to be committed (default 0: committed before the partition's
   * next batch is fetched). Above 0, one timer commits every partition's handled offsets at most that often, and at
   * once when the consumer stops or its group rebalances: the commit leaves the path from one fetch to the next
   * (at low rates it was one Kafka request for every batch of one or two events). A crash, or a commit Kafka
   * refused, hands up to that much work to be read again; only a handler that knows what it already did (the
   * sender's ledger) takes this.
   */
  commitIntervalMs?: number;
  /**
   * The event types the handler takes (default: all). Events of other types are neither decoded nor handed to it,
   * and their offsets are committed with the rest: the sender reads only MessageAccepted from email.messages, two
   * events in three of which are its own MessageSent and outcomes.
   */
  eventTypes?: readonly string[];
  sessionTimeoutMs?: number;
  onError?: (error: unknown, item: ConsumedEvent<StoredEvent> | undefined) => void;
  /**
   * Called each time the group hands this consumer its partitions (every rebalance, before the next batch): a
   * handler that remembers anything per partition between batches forgets it here, since another copy of the app
   * may have handled those partitions meanwhile (docs/scaling.md).
   */
  onAssigned?: (partitions: { topic: string; partition: number }[]) => void;
}

export interface RunningConsumer {
  consumer: Consumer;
  /** Seeks every assigned partition to the store's position again (after the store restarted, say). */
  resync(): Promise<void>;
  stop(): Promise<void>;
}

/** What the consumer loop uses of the event store. */
export interface ConsumerContext {
  kafka: Kafka;
  codec: EventCodec;
  /** Sends the dead letters. */
  producer: Pick<EventProducer, 'sendRecord'>;
}

/**
 * Runs a handler over the topics as consumer group `options.groupId`, one batch at a time,
 * at least once: a batch's offsets are committed only after the handler returned.
 * A batch that keeps failing is split into single events; an event that still
 * fails after `maxAttempts` (or fails with a non-retriable error) goes to the
 * topic's dead-letter topic with the error, and the partition moves on.
 */
export async function consume(context: ConsumerContext, options: ConsumeOptions): Promise<RunningConsumer> {
  const consumer = context.kafka.consumer({
    groupId: options.groupId,
    maxBytesPerPartition: MAX_EVENT_BYTES,
    maxBytes: MAX_EVENT_BYTES * 2,
    sessionTimeout: options.sessionTimeoutMs ?? 30_000,
    heartbeatInterval: 3000,
    retry: { retries: 10 },
    allowAutoTopicCreation: false,
  });
  await withAdmin(context.kafka, (admin) => ensureTopics(admin, options.topics.map(deadLetterTopicConfig)));
  await consumer.connect();
  await consumer.subscribe({ topics: options.topics, fromBeginning: options.fromBeginning ?? true });
  const retryOptions: RetryOptions = {
    maxAttempts: options.maxAttempts ?? 5,
    initialDelayMs: options.initialRetryDelayMs ?? 200,
    maxDelayMs: options.maxRetryDelayMs ?? 10_000,
  };
  const isRetriable = (error: unknown) => declaredRetriable(error) ?? options.retryUnknownErrors;
  const types = options.eventTypes && new Set(options.eventTypes);
  const stopping = new AbortController();
  const deadLetter = (topic: string, message: KafkaMessage, error: unknown, attempts: number) =>
    context.producer.sendRecord({
      topic: deadLetterTopicOf(topic),
      acks: -1,
      messages: [deadLetterRecord(topic, message, error, attempts, options.groupId)],
    });

  // Offsets handled and not committed yet (commitIntervalMs): the latest batch's commit covers every partition of the
  // member's generation (kafkajs's uncommittedOffsets); one timer sends it. kafkajs forgets the offsets resolved in a
  // generation that has ended (a new offset manager at each sync): those are read again by the partitions' next owner.
  const commitInterval = options.commitIntervalMs ?? 0;
  let deferred: (() => Promise<void>) | undefined;
  let commitTimer: NodeJS.Timeout | undefined;
  const commitDeferred = async () => {
    clearTimeout(commitTimer);
    commitTimer = undefined;
    const commit = deferred;
    deferred = undefined;
    if (!commit) return;
    await commit().catch((cause: unknown) =>
      options.onError?.(
        new InfrastructureError('OffsetCommitFailed', `handled offsets not committed (${describeCause(cause)})`, {
          retriable: true,
          cause,
        }),
        undefined,
      ),
    );
  };
  const deferCommit = (commit: () => Promise<void>) => {
    deferred = commit;
    commitTimer ??= setTimeout(() => void commitDeferred(), commitInterval);
  };
  if (commitInterval > 0) {
    // Before the partitions go to their next owners (Kafka takes the ending generation's commits until then).
    consumer.on(consumer.events.REBALANCING, () => void commitDeferred());
  }

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
  /**
   * The offsets batches resolved while a resync was reading its store's positions, one map per resync running. A
   * batch fetched before the seek can be handled and committed meanwhile; the resync's commit, read earlier, must not
   * then move the group's offset back behind it (it would stay there while no new event comes: a replay waiting for
   * the group to reach the log's end would wait its whole timeout).
   */
  const resolvedDuringResync = new Set<Map<string, bigint>>();
  /** Seeks every assigned partition to its store's position (at start, after a rebalance, after a store restart). */
  const resync = async () => {
    if (!positions) return;
    const resolved = new Map<string, bigint>();
    resolvedDuringResync.add(resolved);
    try {
      const offsets: { topic: string; partition: number; offset: string }[] = [];
      for (const { topic, partition } of assigned) {
        const applied = await positions.applied(topic, partition);
        if (applied !== null) offsets.push({ topic, partition, offset: String(applied + 1n) });
        seekTo(topic, partition, applied === null ? 0n : applied + 1n);
      }
      // The group's offsets say the same (its lag, a replay waiting for it), also for a partition that gets no new
      // event: a view written just before a crash is ahead of what the group had committed.
      const commits = offsets.filter(
        ({ topic, partition, offset }) => (resolved.get(slotKey(topic, partition)) ?? -1n) < BigInt(offset),
      );
      // A commit refused (a rebalance under way) is made again by the resync of the next join; say it all the same.
      if (commits.length > 0)
        await consumer.commitOffsets(commits).catch((error: unknown) => options.onError?.(error, undefined));
    } finally {
      resolvedDuringResync.delete(resolved);
    }
  };
  if (positions || options.onAssigned) {
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      const partitions = Object.entries(payload.memberAssignment).flatMap(([topic, held]) =>
        held.map((partition) => ({ topic, partition })),
      );
      options.onAssigned?.(partitions);
      if (!positions) return;
      assigned = partitions;
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
        await sleep(outageDelay(outages), stopping.signal);
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
        if (!(error instanceof StoreBehindError)) return false;
        seekTo(error.topic, error.partition, error.nextOffset);
        return true;
      };
      const { items, complete } = await decodeBatch(batch, {
        codec: context.codec,
        // The registry out of reach: wait for it (a good event is never dead-lettered for that).
        onOutage: (_error, outages) => waitOutOutage(outages),
        // Undecodable: no handler can ever take it.
        onUndecodable: (message, error) => deadLetter(batch.topic, message, error, 0),
        ...(types && { types }),
      });
      if (!complete) return;
      const decoded = decodedEvents(items);
      const commitUpTo = async (offset: string) => {
        resolveOffset(offset);
        for (const resolved of resolvedDuringResync) resolved.set(slot, BigInt(offset) + 1n);
        // With autoCommit off and no interval or threshold, kafkajs commits only offsets handed to it explicitly.
        const commit = () => commitOffsetsIfNecessary(uncommittedOffsets());
        if (commitInterval > 0 && !stopping.signal.aborted) deferCommit(commit);
        else await commit();
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
            // Handled: a commit refused now (or the heartbeat after it: "the group is rebalancing") must not hand
            // the batch to the handler again here, at once. It did: the one-at-a-time path below made every event's
            // work a second time within milliseconds, before the first was seen done (the inbound reader's call
            // appended twice and posted twice, one Webhook-Id). The offsets stay resolved: committed with the next
            // batch's, or, after the rebalance, the partition's next owner reads the batch again from the group's
            // offset (at least once, later, as after a kill).
            if (lastOffset) {
              await commitUpTo(lastOffset).catch((error: unknown) => {
                if (isRunning() && !isStale()) options.onError?.(error, undefined);
              });
            }
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
      // One event at a time: the batch handler failed, or there is no batch handler, or no event in the batch is
      // for the handler. An offset is committed after its event is handled; those of messages without an event for
      // the handler (undecodable, or of a type it does not take) go with the next one, or with the batch's last.
      for (const item of items) {
        if (!isRunning() || isStale()) return;
        if (item.event) {
          const single = item as ConsumedEvent<StoredEvent>;
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
                await deadLetter(batch.topic, item.message, error, attempt);
                break;
              }
              await sleep(backoffDelay(attempt, retryOptions), stopping.signal);
              if (!isRunning() || isStale()) return;
              await heartbeat();
            }
          }
          await commitUpTo(item.message.offset);
        }
      }
      if (lastOffset) await commitUpTo(lastOffset);
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
      // What was handled is committed before the group is left (a batch still in hand commits at once, see commitUpTo).
      await commitDeferred();
      await consumer.disconnect();
    },
  };
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
