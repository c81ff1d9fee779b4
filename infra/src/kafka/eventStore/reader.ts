import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { InfrastructureError } from '../../errors';
import { sleep } from '../../retry';
import type { EventCodec } from '../../registry/codec';
import { MAX_EVENT_BYTES } from '../topics';
import { decodeBatch, decodedEvents, outageDelay } from './decodeBatch';
import type { ConsumedEvent, StoredEvent } from './events';
import { withAdmin } from './kafka';
import { slotKey } from './positions';

/** `topic:partition` → the offsets to read, `from` included, `to` not. */
export type OffsetRanges = Map<string, { from: bigint; to: bigint }>;

/**
 * Reads stretches of topics once, for a replay: a throwaway consumer group whose offsets are set to where each
 * stretch starts, stopped once every stretch is read, then deleted. Events come in order per partition; those
 * that cannot be decoded are passed over (the live consumer dead-lettered them); a registry outage is waited out.
 */
export class EventReader {
  constructor(
    private readonly kafka: Kafka,
    private readonly codec: EventCodec,
  ) {}

  /**
   * Reads topics from the beginning up to the end they had when the call started.
   * `onProgress` receives the count read so far and the total to read.
   * Returns how many messages it read (undecodable ones included).
   */
  async readAll(
    topics: string[],
    handleBatch: (events: ConsumedEvent[]) => Promise<void>,
    onProgress?: (read: number, total: number) => void,
  ): Promise<number> {
    const ranges: OffsetRanges = new Map();
    await withAdmin(this.kafka, async (admin) => {
      for (const topic of topics) {
        for (const p of await admin.fetchTopicOffsets(topic)) {
          ranges.set(slotKey(topic, p.partition), { from: BigInt(p.low), to: BigInt(p.high) });
        }
      }
    });
    // From the beginning: a fresh group starts there by itself (fromBeginning), without setting its offsets first.
    const { messages } = await this.read(ranges, handleBatch, { groupPrefix: 'replay', onProgress, fromStart: true });
    return messages;
  }

  /**
   * Reads the events in [from, to) of each partition given. Returns how many events it handed over.
   * Fails after `timeoutMs`.
   */
  async readRange(
    ranges: OffsetRanges,
    handle: (items: ConsumedEvent<StoredEvent>[]) => Promise<void>,
    timeoutMs = 120_000,
  ): Promise<number> {
    const { events } = await this.read(ranges, handle, { groupPrefix: 'replay-range', timeoutMs });
    return events;
  }

  /**
   * The one event at `offset` of a partition (undefined when that offset holds no decodable event, or no longer
   * exists), for a single lookup such as a message's source. Quicker than `readRange` (whose group offsets are set
   * through the admin client, a paused consumer that waits a whole fetch): a throwaway group that starts at the
   * topic's end, seeks the one partition, and is gone after. Fails after `timeoutMs`; an outage of the schema
   * registry throws (the caller answers 503).
   */
  async readAt(topic: string, partition: number, offset: bigint, timeoutMs = 10_000): Promise<StoredEvent | undefined> {
    // An offset the partition no longer (or never) held would leave the consumer waiting at the end until the timeout.
    const bounds = await withAdmin(this.kafka, async (admin) =>
      (await admin.fetchTopicOffsets(topic)).find((p) => p.partition === partition),
    );
    if (!bounds || offset < BigInt(bounds.low) || offset >= BigInt(bounds.high)) return undefined;
    const groupId = `read-at-${randomUUID()}`;
    const consumer = this.kafka.consumer({
      groupId,
      maxBytesPerPartition: MAX_EVENT_BYTES,
      maxWaitTimeInMs: 100,
      allowAutoTopicCreation: false,
    });
    let timer: NodeJS.Timeout | undefined;
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: [topic], fromBeginning: false });
      return await new Promise<StoredEvent | undefined>((resolve, reject) => {
        timer = setTimeout(() => {
          reject(
            new InfrastructureError(
              'ReadAtTimeout',
              `reading ${topic}:${partition}@${offset} took over ${timeoutMs} ms`,
              {
                retriable: true,
              },
            ),
          );
        }, timeoutMs);
        consumer
          .run({
            autoCommit: false,
            eachBatch: async ({ batch }) => {
              if (batch.partition !== partition) return;
              const message = batch.messages.find((m) => BigInt(m.offset) === offset);
              if (message) {
                const { items } = await decodeBatch(
                  { topic, partition, messages: [message] },
                  { codec: this.codec },
                ).catch((error: unknown) => {
                  reject(error);
                  return { items: [] };
                });
                resolve(items[0]?.event);
              } else if (batch.messages.length > 0 && BigInt(batch.messages[0]!.offset) > offset) {
                resolve(undefined);
              }
            },
          })
          .then(() => consumer.seek({ topic, partition, offset: String(offset) }))
          .catch(reject);
      });
    } finally {
      clearTimeout(timer);
      await consumer.disconnect();
      await withAdmin(this.kafka, (admin) => admin.deleteGroups([groupId])).catch(() => undefined);
    }
  }

  private async read(
    ranges: OffsetRanges,
    handle: (items: ConsumedEvent<StoredEvent>[]) => Promise<void>,
    options: {
      groupPrefix: string;
      timeoutMs?: number;
      onProgress?: (read: number, total: number) => void;
      /** Every range starts at its partition's first offset: no need to set the group's offsets. */
      fromStart?: boolean;
    },
  ): Promise<{ messages: number; events: number }> {
    // Copies: each range's `from` moves past what was handed over, so a batch fetched again (before and after a seek)
    // hands nothing over twice.
    const pending: OffsetRanges = new Map(
      [...ranges].filter(([, range]) => range.to > range.from).map(([slot, range]) => [slot, { ...range }]),
    );
    const counts = { messages: 0, events: 0 };
    if (pending.size === 0) return counts;
    let total = 0n;
    for (const range of pending.values()) total += range.to - range.from;
    const partitionCount = pending.size;
    const groupId = `${options.groupPrefix}-${randomUUID()}`;
    const topics = [...new Set([...pending.keys()].map((slot) => topicOfSlot(slot)))];
    // Where each partition starts: where its stretch does, or its end when it has nothing to read. Set by seeking
    // once the consumer runs (as readAt does), not through the admin client: setting a new group's offsets costs
    // about 5 s (kafkajs looks up the coordinator of a group that does not exist yet). A batch fetched before a seek
    // took effect holds nothing of its stretch and is passed over. From the start, fromBeginning does it alone.
    const starts: { topic: string; partition: number; offset: string }[] = [];
    if (!options.fromStart)
      await withAdmin(this.kafka, async (admin) => {
        for (const topic of topics) {
          for (const p of await admin.fetchTopicOffsets(topic)) {
            const offset = String(pending.get(slotKey(topic, p.partition))?.from ?? p.high);
            starts.push({ topic, partition: p.partition, offset });
          }
        }
      });
    const consumer = this.kafka.consumer({
      groupId,
      maxBytesPerPartition: MAX_EVENT_BYTES,
      allowAutoTopicCreation: false,
    });
    let failure: unknown;
    const failed = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    await consumer.connect();
    try {
      await consumer.subscribe({ topics, fromBeginning: true });
      await new Promise<void>((resolve) => {
        const fail = (error: unknown) => {
          failure ??= error;
          failed.abort();
          resolve();
        };
        if (options.timeoutMs !== undefined) {
          const timeoutMs = options.timeoutMs;
          timer = setTimeout(() => {
            fail(
              new InfrastructureError(
                'ReplayRangeTimeout',
                `reading ${partitionCount} partitions took over ${timeoutMs} ms`,
                { retriable: true },
              ),
            );
          }, timeoutMs);
        }
        consumer
          .run({
            autoCommit: false,
            eachBatch: async ({ batch, heartbeat }) => {
              const slot = slotKey(batch.topic, batch.partition);
              const range = pending.get(slot);
              if (!range || failure) return;
              const messages = batch.messages.filter(
                (m) => BigInt(m.offset) >= range.from && BigInt(m.offset) < range.to,
              );
              const { items, complete } = await decodeBatch(
                { topic: batch.topic, partition: batch.partition, messages },
                {
                  codec: this.codec,
                  onOutage: async (_error, outages) => {
                    await sleep(outageDelay(outages), failed.signal);
                    if (failure) return false;
                    await heartbeat();
                    return true;
                  },
                },
              );
              if (!complete) return;
              const events = decodedEvents(items);
              try {
                if (events.length > 0) await handle(events);
              } catch (error) {
                fail(error);
                return;
              }
              counts.messages += messages.length;
              counts.events += events.length;
              options.onProgress?.(counts.messages, Number(total));
              await heartbeat();
              const last = batch.messages.at(-1);
              if (last && BigInt(last.offset) >= range.from) range.from = BigInt(last.offset) + 1n;
              if (range.from >= range.to) pending.delete(slot);
              if (pending.size === 0) resolve();
            },
          })
          .then(() => {
            for (const start of starts) consumer.seek(start);
          })
          .catch(fail);
      });
    } finally {
      clearTimeout(timer);
      await consumer.disconnect();
      await withAdmin(this.kafka, (admin) => admin.deleteGroups([groupId])).catch(() => undefined);
    }
    if (failure) throw failure;
    return counts;
  }
}

/** The topic of a `topic:partition` slot (a topic name may hold colons; the partition number does not). */
function topicOfSlot(slot: string): string {
  return slot.slice(0, slot.lastIndexOf(':'));
}
