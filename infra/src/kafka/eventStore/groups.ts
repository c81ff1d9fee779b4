import type { Kafka } from 'kafkajs';
import { retry, type RetryOptions } from '../../retry';
import { withAdmin } from './kafka';

/**
 * Where a consumer group that has never committed starts. 'earliest': at the beginning of each topic
 * (kafkajs's fromBeginning), so nothing accepted is ever skipped. 'latest': the group's offsets are set
 * to the topics' current ends before it joins, so it sees only what is appended from now on (fresh
 * groups in tests and benchmarks, which must not send the topic's history again). A group that has
 * committed offsets always resumes from them.
 *
 * Kafka's retriable answers (a broker just started says NOT_COORDINATOR until it has loaded the group's
 * coordinator) are tried again for about 20 s a step. Whether the group is fresh is decided once, and each topic is
 * positioned on its own: a retry after some topics were set never takes them for the group's own commits.
 */
export async function positionNewGroup(
  store: { kafka: Kafka },
  groupId: string,
  topics: readonly string[],
  at: 'earliest' | 'latest',
): Promise<void> {
  if (at === 'earliest') return;
  await withAdmin(store.kafka, async (admin) => {
    const committed = await retry(() => admin.fetchOffsets({ groupId, topics: [...topics] }), KAFKA_ANSWERS);
    if (committed.some((topic) => topic.partitions.some((p) => Number(p.offset) >= 0))) return;
    for (const topic of topics) {
      await retry(async () => {
        const ends = await admin.fetchTopicOffsets(topic);
        await admin.setOffsets({
          groupId,
          topic,
          partitions: ends.map((end) => ({ partition: end.partition, offset: end.high })),
        });
      }, KAFKA_ANSWERS);
    }
  });
}

const KAFKA_ANSWERS: RetryOptions = { maxAttempts: 12, initialDelayMs: 200, maxDelayMs: 3_000 };
