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
  await store.ensureTopics(topicConfigs(store.topics));
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
    `provisioned in ${Date.now() - started} ms: topics ${Object.values(store.topics).join(', ')}; ${registered} event schemas; ` +
      `ClickHouse ${addresses.clickhouseDatabase} migrations applied now: ${applied.length ? applied.join(', ') : 'none (up to date)'}`,
  );
} finally {
  await store.disconnect();
}
