import type { Consumer } from 'kafkajs';
import {
  AccountsView,
  dkimRecordsFromMap,
  dkimRecordValue,
  TestMailServer,
  type EventStore,
  type StoredEvent,
  type TestMailServerOptions,
} from '@sendline/infra';
import {
  positionNewGroup,
  Sender,
  senderConfigFromEnv,
  type SenderConfig,
  type SenderDependencies,
} from '@sendline/sender';
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
