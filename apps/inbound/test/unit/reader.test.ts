import { prefixedTopicNames, type ConsumedEvent, type EventStore, type StoredEvent } from '@sendline/infra';
import type { InboundRule, MailReceivedData, ServerSettings } from '@sendline/domain';
import { describe, expect, it } from 'vitest';
import { InboundReader, type InboundDirectory } from '../../src/reader';

const DOMAIN = 'inbound.sendline.dev';
const HASHES = { acme: '0123456789abcdef0123456789abcdef', globex: 'fedcba9876543210fedcba9876543210' };

/** An event store that keeps what is appended (the reader's only writes), and reads nothing. */
function memoryStore(): { store: EventStore; appended: StoredEvent[] } {
  const appended: StoredEvent[] = [];
  const store = {
    topics: prefixedTopicNames('unit'),
    ensureTopics: async () => undefined,
    consume: async () => ({ stop: async () => undefined }),
    append: async (events: StoredEvent[]) => {
      appended.push(...events);
    },
  } as unknown as EventStore;
  return { store, appended };
}

/** The accounts view of two organizations, counting the questions asked; acme blocks a sender once told to. */
function countingDirectory() {
  const asked: string[] = [];
  const rules: Record<string, InboundRule[]> = { acme: [], globex: [] };
  const directory: InboundDirectory = {
    organizationOfInboundHash: async (hash) => {
      asked.push(`hash ${hash}`);
      return Object.entries(HASHES).find(([, h]) => h === hash)?.[0] ?? null;
    },
    serverSettings: async (organizationId) => {
      asked.push(`settings ${organizationId}`);
      return { rawEmailEnabled: false, inboundDomain: '' } as unknown as ServerSettings;
    },
    inboundRules: async (organizationId) => {
      asked.push(`rules ${organizationId}`);
      return rules[organizationId] ?? [];
    },
  };
  return { directory, asked, rules };
}

let received = 0;
function mailTo(organization: keyof typeof HASHES, from: string): ConsumedEvent<StoredEvent> {
  const n = ++received;
  const raw = Buffer.from(`From: ${from}\r\nTo: ${HASHES[organization]}@${DOMAIN}\r\nSubject: mail ${n}\r\n\r\nhi\r\n`);
  const data: MailReceivedData = {
    receivedId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    envelopeFrom: from,
    envelopeTo: [`${HASHES[organization]}@${DOMAIN}`],
    remoteAddress: '192.0.2.1',
    heloName: 'mail.sender.example',
    receivedAt: 1_767_225_600_000 + n,
    raw,
  };
  const metadata = { eventId: `received-${n}`, organizationId: '', occurredAt: data.receivedAt, schemaVersion: 1 };
  return { event: { type: 'MailReceived', data, metadata } } as unknown as ConsumedEvent<StoredEvent>;
}

describe('the inbound reader, one batch at a time', () => {
  it('asks the accounts view each question once per batch, and afresh for the next (a rule set between them counts)', async () => {
    const { store, appended } = memoryStore();
    const { directory, asked, rules } = countingDirectory();
    const authenticate = async () => ({ spf: 'none', dkim: 'none', dmarc: 'none', headers: [] });
    const { reader } = await InboundReader.start({
      store,
      directory,
      inboundDomain: DOMAIN,
      mta: 'mx.test',
      authenticate,
    });

    const batch = [
      ...Array.from({ length: 5 }, () => mailTo('acme', 'spam@bad.example')),
      ...Array.from({ length: 3 }, () => mailTo('globex', 'spam@bad.example')),
    ];
    await reader.handle(batch);
    expect([...asked].sort()).toEqual([
      `hash ${HASHES.acme}`,
      `hash ${HASHES.globex}`,
      'rules acme',
      'rules globex',
      'settings acme',
      'settings globex',
    ]);
    const statuses = (events: StoredEvent[]) =>
      events
        .filter((e) => e.type === 'InboundMessageReceived')
        .map((e) => `${e.metadata.organizationId} ${(e.data as { status: string }).status}`);
    expect(statuses(appended)).toEqual([...Array(5).fill('acme Queued'), ...Array(3).fill('globex Queued')]);
    expect(appended.filter((e) => e.type === 'WebhookCallScheduled')).toHaveLength(8);

    // acme blocks the sender: the next batch reads the rules again.
    rules.acme = [{ ruleId: 1, rule: 'bad.example' }];
    asked.length = 0;
    appended.length = 0;
    await reader.handle([mailTo('acme', 'spam@bad.example'), mailTo('acme', 'spam@bad.example')]);
    expect(asked.filter((q) => q === 'rules acme')).toHaveLength(1);
    expect(statuses(appended)).toEqual(['acme Blocked', 'acme Blocked']);
    expect(appended.filter((e) => e.type === 'WebhookCallScheduled')).toHaveLength(0);
  });
});
