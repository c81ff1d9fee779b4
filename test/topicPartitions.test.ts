import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore, prefixedTopicNames, topicConfigs } from '@sendline/infra';
import { addresses, deleteTopicsAndDisconnect } from './support/services';

/**
 * Topic partitions are a checked setting (docs/scaling.md): how many copies of an app can share a topic. An existing
 * topic whose count is not the configured one is reported, and provisioning stops on it before changing anything
 * (growing a topic moves keys to other partitions).
 */

const run = promisify(execFile);
const prefix = `test-${randomUUID().slice(0, 8)}`;
let store: EventStore;

beforeAll(async () => {
  store = new EventStore({
    brokers: addresses.kafkaBrokers,
    registryUrl: addresses.schemaRegistryUrl,
    clientId: 'test-topic-partitions',
    topics: prefixedTopicNames(prefix),
  });
  // email.messages made by hand with 3 partitions, before provisioning: what a cluster set up otherwise may hold.
  await store.ensureTopics(topicConfigs(store.topics, 3).filter((config) => config.topic === store.topics.messages));
});

afterAll(async () => {
  if (store) await deleteTopicsAndDisconnect(store);
});

describe('topic partitions, checked', () => {
  it('reports an existing topic whose partitions are not the configured count, and no topic not created yet', async () => {
    expect(await store.partitionMismatches(topicConfigs(store.topics, 6))).toEqual([
      { topic: store.topics.messages, configured: 6, actual: 3 },
    ]);
    expect(await store.partitionMismatches(topicConfigs(store.topics, 3))).toEqual([]);
  });

  it('stops provisioning, naming the topic, before it changes or creates anything', async () => {
    const failed = await run(process.execPath, ['--import', 'tsx', 'infra/local/src/provision.ts'], {
      env: { ...process.env, SENDLINE_TOPIC_PREFIX: prefix, SENDLINE_KAFKA_PARTITIONS: '6' },
    }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(`topic ${store.topics.messages} has 3 partitions; the configuration says 6`);
    // Nothing was changed or created: email.messages kept its 3 partitions, and it is still the only topic.
    expect(await store.partitionMismatches(topicConfigs(store.topics, 6))).toEqual([
      { topic: store.topics.messages, configured: 6, actual: 3 },
    ]);
    const admin = store.kafka.admin();
    await admin.connect();
    const mine = (await admin.listTopics()).filter((topic) => topic.startsWith(`${prefix}.`));
    await admin.disconnect();
    expect(mine).toEqual([store.topics.messages]);
  });
});
