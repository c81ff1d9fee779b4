import { randomUUID } from 'node:crypto';
import { deadLetterTopicOf, EventStore, serviceAddresses, topicConfigs, type TopicNames } from '@sendline/infra';

/** The real services' addresses (`npm test` starts them and exports their addresses). */
export const addresses = serviceAddresses();

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** Fresh topic names for one test file, so tests never read each other's events. */
export function freshTopicNames(): TopicNames {
  const run = randomUUID().slice(0, 8);
  return {
    messages: `test-${run}.email.messages`,
    suppressions: `test-${run}.email.suppressions`,
    accounts: `test-${run}.accounts`,
    accountsHistory: `test-${run}.accounts.history`,
    deliveryRetries: `test-${run}.email.delivery-retries`,
    webhookCalls: `test-${run}.webhooks.calls`,
    received: `test-${run}.mail.received`,
    inbound: `test-${run}.email.inbound`,
  };
}

/** An event store on fresh topics, created with the production topic settings. */
export async function freshEventStore(clientId = 'test'): Promise<EventStore> {
  const topics = freshTopicNames();
  const store = new EventStore({
    brokers: addresses.kafkaBrokers,
    registryUrl: addresses.schemaRegistryUrl,
    clientId,
    topics,
  });
  await store.ensureTopics(topicConfigs(topics, 3));
  return store;
}

/**
 * Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. The timeout only catches
 * what never happens: it returns as soon as the condition holds, so a generous default costs a passing test nothing
 * and keeps a test from failing on a loaded machine.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
}

/** Deletes a test's own topics (and their dead-letter topics), then disconnects the store. */
export async function deleteTopicsAndDisconnect(store: EventStore): Promise<void> {
  const admin = store.kafka.admin();
  await admin.connect();
  const topics = Object.values(store.topics);
  const existing = new Set(await admin.listTopics());
  await admin
    .deleteTopics({ topics: [...topics, ...topics.map(deadLetterTopicOf)].filter((t) => existing.has(t)) })
    .catch(() => undefined);
  await admin.disconnect();
  await store.disconnect();
}
