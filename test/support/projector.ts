import { startProjector, type RunningProjector } from '@sendline/projector';
import { createClickHouse, createRedis, type EventStore, groupOf } from '@sendline/infra';
import { addresses, uniqueName } from './services';

/**
 * The real activity projection, in-process, under a fresh consumer group that
 * starts at the topic's current end: the test's own messages are projected at
 * once, without first working through every message earlier runs left behind.
 */
export async function startActivityProjection(
  store: EventStore,
): Promise<{ projector: RunningProjector; stop(): Promise<void> }> {
  const redis = createRedis(addresses.redisUrl);
  const clickhouse = createClickHouse(addresses.clickhouseUrl);
  const groupPrefix = uniqueName('test-projector');
  const admin = store.kafka.admin();
  await admin.connect();
  try {
    const ends = await admin.fetchTopicOffsets(store.topics.messages);
    await admin.setOffsets({
      groupId: groupOf('activity', groupPrefix),
      topic: store.topics.messages,
      partitions: ends.map((p) => ({ partition: p.partition, offset: p.high })),
    });
  } finally {
    await admin.disconnect();
  }
  const projector = await startProjector({
    store,
    redis,
    clickhouse,
    database: addresses.clickhouseDatabase,
    groupPrefix,
    projections: ['activity'],
    retention: false,
    writer: { maxDelayMs: 100 },
  });
  return {
    projector,
    stop: async () => {
      await projector.stop();
      await clickhouse.close();
      redis.disconnect();
    },
  };
}
