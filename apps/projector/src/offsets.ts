import { randomUUID } from 'node:crypto';
import type { Admin } from 'kafkajs';
import { InfrastructureError, type ConsumedEvent, type EventStore, type StoredEvent } from '@sendline/infra';

/** `topic:partition` → an offset. */
export type Offsets = Map<string, bigint>;

export const slotOf = (topic: string, partition: number) => `${topic}:${partition}`;

function parseSlot(slot: string): { topic: string; partition: number } {
  const at = slot.lastIndexOf(':');
  return { topic: slot.slice(0, at), partition: Number(slot.slice(at + 1)) };
}

export interface PartitionLag {
  topic: string;
  partition: number;
  /** The group's committed offset (the next event it will read); -1 when it committed none. */
  committed: string;
  high: string;
  lag: number;
}

async function withAdmin<T>(store: EventStore, run: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = store.kafka.admin();
  await admin.connect();
  try {
    return await run(admin);
  } finally {
    await admin.disconnect();
  }
}

/** The low and high watermarks of every partition of the topics. */
export async function topicOffsets(
  admin: Admin,
  topics: string[],
): Promise<Map<string, { low: bigint; high: bigint }>> {
  const result = new Map<string, { low: bigint; high: bigint }>();
  for (const topic of topics) {
    for (const p of await admin.fetchTopicOffsets(topic)) {
      result.set(slotOf(topic, p.partition), { low: BigInt(p.low), high: BigInt(p.high) });
    }
  }
  return result;
}

/** Lag per partition of a consumer group: events on the topic that the group has not committed yet. */
export async function consumerLag(admin: Admin, groupId: string, topics: string[]): Promise<PartitionLag[]> {
  const ends = await topicOffsets(admin, topics);
  const committed = await admin.fetchOffsets({ groupId, topics });
  const lags: PartitionLag[] = [];
  for (const { topic, partitions } of committed) {
    for (const { partition, offset } of partitions) {
      const end = ends.get(slotOf(topic, partition));
      if (!end) continue;
      const done = BigInt(offset) >= 0n ? BigInt(offset) : end.low;
      lags.push({ topic, partition, committed: offset, high: String(end.high), lag: Number(end.high - done) });
    }
  }
  return lags;
}

/** The offsets a group committed, or null when it committed none on these topics (no such consumer). */
export function committedOffsets(store: EventStore, groupId: string, topics: string[]): Promise<Offsets | null> {
  return withAdmin(store, async (admin) => {
    const result: Offsets = new Map();
    let any = false;
    for (const { topic, partitions } of await admin.fetchOffsets({ groupId, topics })) {
      for (const { partition, offset } of partitions) {
        const value = BigInt(offset);
        if (value >= 0n) any = true;
        result.set(slotOf(topic, partition), value < 0n ? 0n : value);
      }
    }
    return any ? result : null;
  });
}

/** Whether a consumer group has members now (a live projector is running in it). */
export function groupHasMembers(store: EventStore, groupId: string): Promise<boolean> {
  return withAdmin(store, async (admin) => {
    const { groups } = await admin.describeGroups([groupId]);
    return (groups[0]?.members.length ?? 0) > 0;
  });
}

/** The high watermarks of the topics' partitions now. */
export function endOffsets(store: EventStore, topics: string[]): Promise<Offsets> {
  return withAdmin(store, async (admin) => {
    const result: Offsets = new Map();
    for (const [slot, { high }] of await topicOffsets(admin, topics)) result.set(slot, high);
    return result;
  });
}

/** Slots where `to` is past `from`: what a reader at `from` has still to read to reach `to`. */
export function remaining(from: Offsets, to: Offsets): Map<string, { from: bigint; to: bigint }> {
  const ranges = new Map<string, { from: bigint; to: bigint }>();
  for (const [slot, end] of to) {
    const start = from.get(slot) ?? 0n;
    if (end > start) ranges.set(slot, { from: start, to: end });
  }
  return ranges;
}

/**
 * Reads the events in [from, to) of each partition given, in order per partition,
 * with a throwaway consumer group whose offsets are set to `from` before it starts.
 * Returns how many events it handed over. Fails after `timeoutMs`.
 */
export async function readRange(
  store: EventStore,
  ranges: Map<string, { from: bigint; to: bigint }>,
  handle: (items: ConsumedEvent<StoredEvent>[]) => Promise<void>,
  timeoutMs = 120_000,
): Promise<number> {
  if (ranges.size === 0) return 0;
  const groupId = `replay-range-${randomUUID()}`;
  const topics = [...new Set([...ranges.keys()].map((slot) => parseSlot(slot).topic))];
  await withAdmin(store, async (admin) => {
    const ends = await topicOffsets(admin, topics);
    for (const topic of topics) {
      const partitions = [...ends]
        .filter(([slot]) => parseSlot(slot).topic === topic)
        .map(([slot, end]) => ({
          partition: parseSlot(slot).partition,
          offset: String(ranges.get(slot)?.from ?? end.high),
        }));
      await admin.setOffsets({ groupId, topic, partitions });
    }
  });
  const pending = new Map(ranges);
  const consumer = store.kafka.consumer({ groupId, allowAutoTopicCreation: false });
  let read = 0;
  let failure: unknown;
  let timer: NodeJS.Timeout | undefined;
  await consumer.connect();
  try {
    await consumer.subscribe({ topics, fromBeginning: true });
    await new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        failure = new InfrastructureError(
          'ReplayRangeTimeout',
          `reading ${ranges.size} partitions took over ${timeoutMs} ms`,
          {
            retriable: true,
          },
        );
        resolve();
      }, timeoutMs);
      void consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch, heartbeat }) => {
          const slot = slotOf(batch.topic, batch.partition);
          const range = pending.get(slot);
          if (!range || failure) return;
          const items: ConsumedEvent<StoredEvent>[] = [];
          let last = -1n;
          for (const message of batch.messages) {
            const offset = BigInt(message.offset);
            if (offset >= range.to) break;
            last = offset;
            if (offset < range.from || !message.value) continue;
            const position = {
              topic: batch.topic,
              partition: batch.partition,
              offset: message.offset,
              key: message.key ? message.key.toString('utf8') : null,
            };
            try {
              items.push({ event: (await store.codec.decode(message.value)) as StoredEvent, position, message });
            } catch {
              // Undecodable: the live consumer dead-lettered it; a replay skips it the same way.
            }
          }
          try {
            if (items.length > 0) await handle(items);
          } catch (error) {
            failure = error;
            resolve();
            return;
          }
          read += items.length;
          await heartbeat();
          const next = batch.messages.at(-1);
          if (last + 1n >= range.to || (next && BigInt(next.offset) + 1n >= range.to)) pending.delete(slot);
          if (pending.size === 0) resolve();
        },
      });
    });
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
    await withAdmin(store, (admin) => admin.deleteGroups([groupId])).catch(() => undefined);
  }
  if (failure) throw failure;
  return read;
}
