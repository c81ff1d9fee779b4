/**
 * Offsets of topics and consumer groups, for the projector's lag and a replay's bookkeeping (where the live
 * projection stands, what is left to read). Reading the events themselves is the event store's (`readRange`).
 */
import type { Admin } from 'kafkajs';
import { slotKey, withAdmin, type EventStore } from './eventStore';

/** `topic:partition` → an offset. */
export type Offsets = Map<string, bigint>;

export interface PartitionLag {
  topic: string;
  partition: number;
  /** The group's committed offset (the next event it will read); -1 when it committed none. */
  committed: string;
  high: string;
  lag: number;
}

/** The low and high watermarks of every partition of the topics. */
export async function topicOffsets(
  admin: Admin,
  topics: string[],
): Promise<Map<string, { low: bigint; high: bigint }>> {
  const result = new Map<string, { low: bigint; high: bigint }>();
  for (const topic of topics) {
    for (const p of await admin.fetchTopicOffsets(topic)) {
      result.set(slotKey(topic, p.partition), { low: BigInt(p.low), high: BigInt(p.high) });
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
      const end = ends.get(slotKey(topic, partition));
      if (!end) continue;
      const done = BigInt(offset) >= 0n ? BigInt(offset) : end.low;
      lags.push({ topic, partition, committed: offset, high: String(end.high), lag: Number(end.high - done) });
    }
  }
  return lags;
}

/** The offsets a group committed, or null when it committed none on these topics (no such consumer). */
export function committedOffsets(store: EventStore, groupId: string, topics: string[]): Promise<Offsets | null> {
  return withAdmin(store.kafka, async (admin) => {
    const result: Offsets = new Map();
    let any = false;
    for (const { topic, partitions } of await admin.fetchOffsets({ groupId, topics })) {
      for (const { partition, offset } of partitions) {
        const value = BigInt(offset);
        if (value >= 0n) any = true;
        result.set(slotKey(topic, partition), value < 0n ? 0n : value);
      }
    }
    return any ? result : null;
  });
}

/** Whether a consumer group has members now (a live projector is running in it). */
export function groupHasMembers(store: EventStore, groupId: string): Promise<boolean> {
  return withAdmin(store.kafka, async (admin) => {
    const { groups } = await admin.describeGroups([groupId]);
    return (groups[0]?.members.length ?? 0) > 0;
  });
}

/** The high watermarks of the topics' partitions now. */
export function endOffsets(store: EventStore, topics: string[]): Promise<Offsets> {
  return withAdmin(store.kafka, async (admin) => {
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
