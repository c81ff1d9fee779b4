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
} from '@sendline/infra';

const addresses = serviceAddresses();
const store = new EventStore({
  brokers: addresses.kafkaBrokers,
  registryUrl: addresses.schemaRegistryUrl,
  clientId: 'provision',
});
const started = Date.now();
try {
  const topics = topicConfigs(store.topics);
  await store.ensureTopics(topics);
  // A topic whose partitions differ from the setting (SENDLINE_KAFKA_PARTITIONS, or one grown by hand) is reported,
  // never changed here: growing moves keys (docs/scaling.md).
  const mismatches = await store.partitionMismatches(topics);
  if (mismatches.length > 0) {
    for (const { topic, configured, actual } of mismatches) {
      console.error(`topic ${topic} has ${actual} partitions; the configuration says ${configured}`);
    }
    console.error('see docs/scaling.md before changing partitions');
    process.exitCode = 1;
  }
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
