import {
  AccountsView,
  AllowanceCounter,
  createRedis,
  EventStore,
  type Redis,
  type ServiceAddresses,
  type StoredEvent,
  type TestMailServer,
  deadLetterTopicOf,
  withAdmin,
} from '@sendline/infra';
import { allowancePeriod } from '@sendline/domain';
import { createTestOrganization, type TestOrganization } from '../support/api';
import { startMailServer } from '../sender/support';
import { freePort } from '../support/ports';
import { apiApp, appEnvironment, projectorApp, readyz, senderApp, waitUntil, type AppProcess } from './harness';

/**
 * The whole path on a set of services (a private stack): an organization with a verified domain, a test
 * mail server that checks DKIM, and the API, the sender and the projector as the processes `npm start`
 * runs. A fault test kills a service or one of these processes and counts what happened.
 */
export interface Pipeline {
  services: ServiceAddresses;
  org: TestOrganization;
  mail: TestMailServer;
  store: EventStore;
  redis: Redis;
  baseUrl: string;
  api: AppProcess;
  sender: AppProcess;
  projector: AppProcess;
  message(index: number): Record<string, unknown>;
  /** The MessageAccepted events of this organization on email.messages, read from the start. */
  acceptedEvents(): Promise<StoredEvent[]>;
  /** How many times each message (by Message-ID, i.e. MessageID) reached the mail server. */
  deliveriesByMessageId(): Map<string, number>;
  /** The MessageIDs among `expected` that have not reached the mail server yet (one pass over what it received). */
  undelivered(expected: Iterable<string>): string[];
  /**
   * For a failure message: each of `expected` not delivered yet with its events in the log (messages, delivery
   * retries and dead letters), where every consumer group stands against the topics' ends, and the sender's own log lines.
   */
  explainUndelivered(expected: Iterable<string>): Promise<string>;
  /** The allowance the API reads, this month. */
  allowanceUsed(): Promise<number>;
  close(): Promise<void>;
}

export async function startPipeline(
  services: ServiceAddresses,
  options: {
    allowance?: number | null;
    env?: Record<string, string>;
    /** Check DKIM on every N-th delivered message only (default: every one), for a test that counts deliveries under load. */
    verifyDkimEvery?: number;
  } = {},
): Promise<Pipeline> {
  const redis = createRedis(services.redisUrl);
  const store = new EventStore({
    brokers: services.kafkaBrokers,
    registryUrl: services.schemaRegistryUrl,
    clientId: 'chaos-test',
  });
  const accounts = new AccountsView(redis);
  const org = await createTestOrganization(
    { store, accounts, mailHost: 'mail.sendline.test' },
    { allowance: options.allowance === undefined ? 1_000_000 : options.allowance },
  );
  const mail = await startMailServer(accounts, [org], { keepRaw: false, verifyDkim: options.verifyDkimEvery ?? true });
  const apiPort = await freePort();
  const metricsPort = await freePort();
  const env = (extra: Record<string, string>) => () => appEnvironment(services, { ...options.env, ...extra });
  const api = apiApp(env({ SENDLINE_API_PORT: String(apiPort) })).start();
  const sender = senderApp(
    env({ SENDLINE_SMTP_RELAY: `${mail.host}:${mail.port}`, SENDLINE_SENDER_SESSION_TIMEOUT_MS: '10000' }),
  ).start();
  // The group's shortest session timeout: a projector killed with SIGKILL hands its partitions to the one started
  // after it within 6 s, not the default 30 s.
  const projector = projectorApp(
    env({ SENDLINE_PROJECTOR_METRICS_PORT: String(metricsPort), SENDLINE_PROJECTOR_SESSION_TIMEOUT_MS: '6000' }),
  ).start();
  const baseUrl = `http://127.0.0.1:${apiPort}/v1`;
  await waitUntil(async () => (await readyz(baseUrl)) === 200, 90_000, `the API to be ready:\n${api.output}`);

  let sequence = 0;
  const deliveriesByMessageId = () => {
    const counts = new Map<string, number>();
    for (const received of mail.messages()) {
      const id = /<([^@>]+)@/.exec(received.messageId ?? '')?.[1];
      if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  };
  return {
    services,
    org,
    mail,
    store,
    redis,
    baseUrl,
    api,
    sender,
    projector,
    message: (index) => ({
      From: `Chaos <chaos@${org.domain}>`,
      To: `r${index}-${++sequence}@example.net`,
      Subject: `Message ${index}`,
      TextBody: 'Hello from the chaos suite.',
    }),
    acceptedEvents: async () => {
      const found: StoredEvent[] = [];
      await store.readAll([store.topics.messages], async (items) => {
        for (const item of items) {
          if (item.event?.type === 'MessageAccepted' && item.event.metadata.organizationId === org.organizationId) {
            found.push(item.event);
          }
        }
      });
      return found;
    },
    deliveriesByMessageId,
    undelivered: (expected) => {
      const deliveries = deliveriesByMessageId();
      return [...expected].filter((id) => !deliveries.has(id));
    },
    explainUndelivered: async (expected) => {
      const deliveries = deliveriesByMessageId();
      const missing = new Set([...expected].filter((id) => !deliveries.has(id)));
      const found = new Map<string, string[]>([...missing].map((id) => [id, []]));
      /** Every event of each partition read (offset:type:id), and the partitions that hold a missing message. */
      const partitions = new Map<string, string[]>();
      const slots = new Set<string>();
      const read = [store.topics.messages, store.topics.deliveryRetries, deadLetterTopicOf(store.topics.messages)];
      await store.readAll(read, async (items) => {
        for (const item of items) {
          const id = (item.event?.data as { messageId?: string } | undefined)?.messageId;
          const { topic, partition, offset } = item.position;
          const slot = `${topic}[${partition}]`;
          if (!partitions.has(slot)) partitions.set(slot, []);
          partitions.get(slot)!.push(`${offset}:${item.event?.type}:${id?.slice(0, 8)}`);
          if (id && missing.has(id)) {
            found.get(id)!.push(`${item.event!.type} at ${slot}@${offset}`);
            slots.add(slot);
          }
        }
      });
      const ledgers = await Promise.all(
        [...missing].map(async (id) => {
          const keys = await redis.keys(`*:sender:*:message:${id}`);
          return `${id}: ledger ${JSON.stringify(await Promise.all(keys.map(async (key) => [key, await redis.hgetall(key)])))}`;
        }),
      );
      const groups = await withAdmin(store.kafka, async (admin) => {
        const topics = [store.topics.messages, store.topics.deliveryRetries];
        const ends = Object.fromEntries(
          await Promise.all(topics.map(async (topic) => [topic, await admin.fetchTopicOffsets(topic)] as const)),
        );
        const lines = [`ends: ${JSON.stringify(ends)}`];
        for (const { groupId } of (await admin.listGroups()).groups) {
          const offsets = await admin.fetchOffsets({ groupId, topics });
          lines.push(`group ${groupId}: ${JSON.stringify(offsets)}`);
        }
        return lines.join('\n');
      });
      return [
        ...[...found].map(([id, events]) => `${id}: ${events.join(', ') || 'no event in the log'}`),
        ...ledgers,
        ...[...slots].map((slot) => `${slot}: ${partitions.get(slot)!.join(' ')}`),
        groups,
        `sender's own log:\n${sender.ownOutput.slice(-6000)}`,
      ].join('\n');
    },
    allowanceUsed: () => new AllowanceCounter(redis).used(org.organizationId, allowancePeriod(Date.now())),
    close: async () => {
      await Promise.all([api.kill(), sender.kill(), projector.kill()]);
      await mail.stop();
      await store.disconnect();
      redis.disconnect();
    },
  };
}
