/**
 * Makes the services ready for the apps: topics with their partitions, retention
 * and compaction; every event schema registered (BACKWARD); the ClickHouse
 * database and its migrations. Safe to run again: it only adds what is missing.
 */
import { eventSchemas } from '@sendline/schemas';
import { createClickHouse, EventStore, migrate, routeEvent, serviceAddresses, topicConfigs } from '@sendline/infra';

const addresses = serviceAddresses();
const store = new EventStore({
  brokers: addresses.kafkaBrokers,
  registryUrl: addresses.schemaRegistryUrl,
  clientId: 'provision',
});
const started = Date.now();
try {
  await store.ensureTopics(topicConfigs(store.topics));
  let registered = 0;
  for (const type of eventSchemas.keys()) {
    const sample = {
      type,
      data: { messageId: 'x', emailAddress: 'x', email: 'x', domain: 'x', keyId: 'x', callId: 'x' },
      metadata: { organizationId: 'x' },
    };
    await store.codec.schemaId(routeEvent(sample, store.topics).topic, type);
    registered++;
  }
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
