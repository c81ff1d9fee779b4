import type { Consumer } from 'kafkajs';
import type { MessageAccepted } from '@sendline/domain';
import {
  positionNewGroup,
  AccountsView,
  DkimKeys,
  dkimRecordsFromMap,
  dkimRecordValue,
  returnPathKey,
  secretKeyFromEnv,
  TestMailServer,
  type EventStore,
  type SmtpDelivery,
  type StoredEvent,
  type TestMailServerOptions,
} from '@sendline/infra';
import {
  DeliveryPipeline,
  Limiter,
  Sender,
  senderConfigFromEnv,
  type DeliveryJob,
  type DeliveryLedger,
  type SenderConfig,
  type SenderDependencies,
} from '@sendline/sender';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { call } from '../support/http';
import { eventually, uniqueName } from '../support/services';

/** The retry schedule the sender tests use: 300 ms, 600 ms, 1 s, 1 s … and soft bounce after 4 s. */
export const SHORT_RETRIES = { initialDelayMs: 300, multiplier: 2, maxDelayMs: 1000, giveUpAfterMs: 4000, jitter: 0 };

/** A sender configuration for tests: fresh groups that start at the topics' ends, a relay, short retries. */
export function testSenderConfig(
  relay: { host: string; port: number },
  overrides: Partial<SenderConfig> = {},
): SenderConfig {
  return {
    ...senderConfigFromEnv({}),
    groupId: uniqueName('test-sender'),
    retryGroupId: uniqueName('test-sender-retries'),
    startNewGroupsAt: 'latest',
    relay,
    heloName: 'sender.sendline.test',
    sessionTimeoutMs: 10_000,
    shutdownTimeoutMs: 15_000,
    retryPolicy: SHORT_RETRIES,
    ...overrides,
  };
}

/** The sender in this process, delivering only the given organizations' messages. */
export function startTestSender(
  deps: SenderDependencies,
  organizations: readonly string[],
  config: SenderConfig,
  secretKey: Buffer,
): Promise<Sender> {
  const own = new Set(organizations);
  return Sender.start({
    ...deps,
    secretKey,
    config,
    accept: (organizationId) => own.has(organizationId),
    log: () => undefined,
  });
}

/** A test mail server that knows the DKIM public keys of the given organizations' domains. */
export async function startMailServer(
  accounts: AccountsView,
  organizations: readonly { organizationId: string; domain: string }[],
  options: TestMailServerOptions = {},
): Promise<TestMailServer> {
  const records: Record<string, string> = {};
  for (const { organizationId, domain } of organizations) {
    const state = await accounts.domain(organizationId, domain);
    if (!state) throw new Error(`organization ${organizationId} has no domain ${domain}`);
    records[`${state.dkimSelector}._domainkey.${domain}`] = dkimRecordValue(state.dkimPublicKey);
  }
  return new TestMailServer({ dkimRecords: dkimRecordsFromMap(records), ...options }).start();
}

/**
 * What most sender tests start from: the API, one organization with a verified domain, a test mail server that
 * checks its DKIM signatures, and a tap on email.messages for that organization's events.
 */
export interface SenderStage {
  api: TestApi;
  org: TestOrganization;
  mail: TestMailServer;
  tap: EventTap;
  /** A delivery pipeline as the sender builds one, on this stage's services, with `ledger` and `delivery`. */
  pipeline(ledger: DeliveryLedger, delivery: SmtpDelivery): DeliveryPipeline;
  /**
   * Sends one message to `to` through the API and returns its first attempt's job, as if its MessageAccepted had
   * been read at `source` (`<topic>:<partition>:<offset>`, the claim in the ledger).
   */
  acceptedJob(to: string, source: string): Promise<{ messageId: string; job: DeliveryJob }>;
  close(): Promise<void>;
}

export async function startSenderStage(): Promise<SenderStage> {
  const api = await startTestApi();
  const org = await createTestOrganization(api.deps);
  const mine = new Set([org.organizationId]);
  const mail = await startMailServer(api.deps.accounts, [org], { keepRaw: false });
  const tap = await EventTap.start(api.deps.store, [api.deps.store.topics.messages], () => mine);
  return {
    api,
    org,
    mail,
    tap,
    pipeline: (ledger, delivery) =>
      new DeliveryPipeline({
        store: api.deps.store,
        ledger,
        dkimKeys: new DkimKeys(api.deps.accounts, secretKeyFromEnv()),
        returnPath: { key: returnPathKey(secretKeyFromEnv()), domain: senderConfigFromEnv({}).returnPathDomain },
        delivery,
        suppressions: api.deps.suppressions,
        limiter: new Limiter(10),
        retryPolicy: SHORT_RETRIES,
        now: Date.now,
        random: Math.random,
      }),
    acceptedJob: async (to, source) => {
      const response = await call(api.baseUrl, 'POST', '/email', {
        key: org.liveKey,
        body: email(`orders@${org.domain}`, to),
      });
      const messageId: string = response.body.MessageID;
      const [accepted] = (await tap.waitForMessage(messageId, (found) => found.length > 0)) as [MessageAccepted];
      const acceptedValue = await api.deps.store.codec.encode(api.deps.store.topics.messages, accepted);
      return { messageId, job: { accepted, acceptedValue, attempt: 1, source } };
    },
    close: async () => {
      await tap.stop();
      await mail.stop();
      await api.close();
    },
  };
}

/**
 * Every event appended from now on to the given topics for the given organizations, collected in memory
 * (a fresh consumer group set to the topics' current ends before it joins).
 */
export class EventTap {
  private readonly collected: StoredEvent[] = [];
  private readonly everything: StoredEvent[] = [];
  private readonly ids = new Set<string>();

  private constructor(private readonly consumer: Consumer) {}

  static async start(store: EventStore, topics: string[], organizations: () => ReadonlySet<string>): Promise<EventTap> {
    const groupId = uniqueName('test-sender-tap');
    await positionNewGroup(store, groupId, topics, 'latest');
    const consumer = store.kafka.consumer({ groupId, maxWaitTimeInMs: 200, allowAutoTopicCreation: false });
    const tap = new EventTap(consumer);
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        if (!message.value) return;
        const event = (await store.codec.decode(message.value)) as StoredEvent;
        // Events decided again (a crash, or another sender deployment on the same topic) carry the same id.
        if (!organizations().has(event.metadata.organizationId)) return;
        tap.everything.push(event);
        if (tap.ids.has(event.metadata.eventId)) return;
        tap.ids.add(event.metadata.eventId);
        tap.collected.push(event);
      },
    });
    return tap;
  }

  /** The events collected so far, each event id once, in the order read (per message: the order appended). */
  events(predicate: (event: StoredEvent) => boolean = () => true): StoredEvent[] {
    return this.collected.filter(predicate);
  }

  /** Every event read, duplicates (same event id) included. */
  allEvents(predicate: (event: StoredEvent) => boolean = () => true): StoredEvent[] {
    return this.everything.filter(predicate);
  }

  ofMessage(messageId: string): StoredEvent[] {
    return this.events((event) => (event.data as { messageId?: string }).messageId === messageId);
  }

  /** Waits until `predicate` holds for the events of a message; returns them. */
  async waitForMessage(
    messageId: string,
    done: (events: StoredEvent[]) => boolean,
    timeoutMs = 30_000,
    what = `events of ${messageId}`,
  ): Promise<StoredEvent[]> {
    return eventually(
      async () => {
        const events = this.ofMessage(messageId);
        return done(events) ? events : undefined;
      },
      timeoutMs,
      what,
    );
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
  }
}

export const typesOf = (events: StoredEvent[], recipient?: string) =>
  events
    .filter((event) => recipient === undefined || (event.data as { recipient?: string }).recipient === recipient)
    .map((event) => event.type);

export const dataOf = (event: StoredEvent | undefined) => (event?.data ?? {}) as Record<string, any>;

/** A message body for POST /email. */
export function email(from: string, to: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { From: from, To: to, Subject: 'Test', TextBody: 'Hello from the sender tests.', ...extra };
}
