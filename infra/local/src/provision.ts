/**
 * Makes the services ready for the apps: topics with their partitions, retention
 * and compaction; every event schema registered (BACKWARD); the ClickHouse
 * database and its migrations. Safe to run again: it only adds what is missing.
 */
import {
  createClickHouse,
  describeCause,
  EventStore,
  migrate,
  registerEventSchemas,
  serviceAddresses,
  topicConfigs,
  withAdmin,
} from '@sendline/infra';

const addresses = serviceAddresses();
// The topics of the configuration: the real ones, or their copies under SENDLINE_TOPIC_PREFIX.
const store = EventStore.at(addresses, 'provision');
const started = Date.now();
try {
  const topics = topicConfigs(store.topics);
  // An existing topic whose partitions differ from the setting (SENDLINE_KAFKA_PARTITIONS, or one grown by hand) is
  // reported and provisioning stops there, changing nothing: growing a topic moves keys (docs/scaling.md).
  const mismatches = await store.partitionMismatches(topics);
  if (mismatches.length > 0) {
    for (const { topic, configured, actual } of mismatches) {
      console.error(`topic ${topic} has ${actual} partitions; the configuration says ${configured}`);
    }
    console.error('provisioning stopped: see docs/scaling.md before changing partitions');
    process.exit(1);
  }
  await store.ensureTopics(topics);
  // Kafka creates the consumer groups' offsets topic on the first lookup of a group's coordinator: looked up here, so
  // the first consumer started after (an app, a test) does not wait for it on a fresh broker.
  await withAdmin(store.kafka, (admin) => admin.describeGroups(['sendline-provision']));
  const registered = await registerEventSchemas(store.codec, store.topics, {
    onRetry: (error, attempt, delayMs) =>
      console.log(
        `schema registration attempt ${attempt} failed (${describeCause(error)}); trying again in ${delayMs} ms`,
      ),
  });
  const clickhouse = createClickHouse(addresses.clickhouseUrl);
  const applied = await migrate(clickhouse, addresses.clickhouseDatabase);
  await clickhouse.close();
  console.log(
    `provisioned in ${Date.now() - started} ms: topics ${topics.map((t) => `${t.topic} (${t.numPartitions} partitions)`).join(', ')}; ${registered} event schemas; ` +
      `ClickHouse ${addresses.clickhouseDatabase} migrations applied now: ${applied.length ? applied.join(', ') : 'none (up to date)'}`,
  );
} finally {
  await store.disconnect();
}
