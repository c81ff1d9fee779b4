import type { Admin } from 'kafkajs';
import { retry, type EventStore } from '@sendline/infra';

/**
 * Where a consumer group that has never committed starts. 'earliest': at the beginning of each topic
 * (kafkajs's fromBeginning), so nothing accepted is ever skipped. 'latest': the group's offsets are set
 * to the topics' current ends before it joins, so it sees only what is appended from now on (fresh
 * groups in tests and benchmarks, which must not send the topic's history again). A group that has
 * committed offsets always resumes from them.
 *
 * Kafka's retriable answers (a broker just started says NOT_COORDINATOR until it has loaded the group's
 * coordinator) are tried again for about 20 s; setting a fresh group's offsets twice sets them to the same ends.
 */
export async function positionNewGroup(
  store: EventStore,
  groupId: string,
  topics: readonly string[],
  at: 'earliest' | 'latest',
): Promise<void> {
  if (at === 'earliest') return;
  const admin = store.kafka.admin();
  await admin.connect();
  try {
    await retry(() => positionAtEnds(admin, groupId, topics), {
      maxAttempts: 12,
      initialDelayMs: 200,
      maxDelayMs: 3_000,
    });
  } finally {
    await admin.disconnect();
  }
}

async function positionAtEnds(admin: Admin, groupId: string, topics: readonly string[]): Promise<void> {
  const committed = await admin.fetchOffsets({ groupId, topics: [...topics] });
  const hasCommitted = committed.some((topic) => topic.partitions.some((p) => Number(p.offset) >= 0));
  if (hasCommitted) return;
  for (const topic of topics) {
    const ends = await admin.fetchTopicOffsets(topic);
    await admin.setOffsets({
      groupId,
      topic,
      partitions: ends.map((end) => ({ partition: end.partition, offset: end.high })),
    });
  }
}
