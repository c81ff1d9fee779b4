/**
 * The returns reader's batch, with the event store, the activity store and the suppression view stood for by fakes:
 * when it looks messages up, and what it appends and applies.
 */
import type { KafkaMessage } from 'kafkajs';
import type { ReturnedOutcome, SuppressionEvent } from '@sendline/domain';
import {
  returnPathAddress,
  returnPathKey,
  type ConsumedEvent,
  type EventStore,
  type ReturnedMessages,
  type ReturnedMessageState,
  type StoredEvent,
  type SuppressionView,
} from '@sendline/infra';
import { describe, expect, it } from 'vitest';
import { ReturnsReader, type ReadReport } from '../../src';

const secretKey = Buffer.alloc(32, 7);
const MESSAGE = '6b1f3c2a-9d4e-4f5a-8b7c-0d1e2f3a4b5c';
const RECEIVED_AT = Date.UTC(2026, 10, 28, 12);
const userUnknown: ReturnedOutcome = {
  kind: 'HardBounced',
  smtpResponse: 'smtp; 550 5.1.1 user unknown',
  statusCode: 550,
  enhancedStatus: '5.1.1',
  summary: 'Bad destination mailbox address',
};
const complaint: ReturnedOutcome = {
  kind: 'SpamComplaint',
  feedbackType: 'abuse',
  userAgent: 'ExampleFBL/1.0',
  summary: 'Reported as spam by the recipient',
};
const delivered: ReturnedMessageState = {
  phase: 'Sent',
  messageId: MESSAGE,
  organizationId: 'org-a',
  recipients: new Map([['ann@x.example', { status: 'Delivered', failedAttempts: 0 }]]),
  suppressedRecipients: [],
};

function received(envelopeTo: string, receivedId = 'r-1'): ConsumedEvent<StoredEvent> {
  return {
    event: {
      type: 'MailReceived',
      data: { receivedId, envelopeTo: [envelopeTo], envelopeFrom: '', receivedAt: RECEIVED_AT, raw: Buffer.from('x') },
      metadata: { eventId: `e-${receivedId}`, organizationId: '', occurredAt: RECEIVED_AT, schemaVersion: 1 },
    },
    position: { topic: 'mail.received', partition: 0, offset: '0', key: null },
    message: {} as KafkaMessage,
  };
}

/** A reader whose lookups, appends and applies are recorded; `readReport` and `lookUp` stand for the parser and the store. */
async function readerWith(
  readReport: (raw: Buffer) => Promise<ReadReport>,
  lookUp: (ids: readonly string[]) => Promise<Map<string, ReturnedMessageState>> = async (ids) =>
    new Map(ids.filter((id) => id === MESSAGE).map((id) => [id, delivered])),
) {
  const lookups: string[][] = [];
  const appended: StoredEvent[] = [];
  const applied: SuppressionEvent[] = [];
  const store = {
    topics: { received: 'mail.received' },
    consume: async () => ({ consumer: undefined, resync: async () => undefined, stop: async () => undefined }),
    append: async (events: StoredEvent[]) => void appended.push(...events),
  } as unknown as EventStore;
  const messages = {
    states: (ids: readonly string[]) => {
      lookups.push([...ids]);
      return lookUp(ids);
    },
  } as unknown as ReturnedMessages;
  const suppressions = { apply: async (events: SuppressionEvent[]) => void applied.push(...events) };
  const { reader } = await ReturnsReader.start({
    store,
    messages,
    suppressions: suppressions as unknown as SuppressionView,
    secretKey,
    readReport,
  });
  return { reader, lookups, appended, applied };
}

const report = (outcome: ReturnedOutcome, named: string[] = [], sendlineMessageId?: string): ReadReport => ({
  namedRecipients: named,
  ...(sendlineMessageId && { sendlineMessageId }),
  outcomeOf: () => outcome,
});

describe('the returns reader, one batch', () => {
  const token = returnPathAddress(returnPathKey(secretKey), { messageId: MESSAGE, recipientIndex: 0 }, 'b.example');

  it('looks the messages up by their tokens while the mails are still being parsed', async () => {
    let lookedUp: () => void = () => undefined;
    const lookupStarted = new Promise<void>((resolve) => (lookedUp = resolve));
    // The parse ends only once the lookup has begun: a reader that parsed first and looked up after would wait here.
    const { reader, lookups, appended, applied } = await readerWith(
      async () => {
        await lookupStarted;
        return report(userUnknown);
      },
      async (ids) => {
        lookedUp();
        return new Map(ids.map((id) => [id, delivered]));
      },
    );
    const decisions = await reader.handle([received(token)]);
    expect(decisions).toMatchObject([{ kind: 'Recorded', messageId: MESSAGE, recipient: 'ann@x.example' }]);
    expect(lookups).toEqual([[MESSAGE]]);
    expect(appended.map((event) => event.type)).toEqual(['MessageHardBounced', 'SuppressionAdded']);
    expect(applied.map((event) => event.data.emailAddress)).toEqual(['ann@x.example']);
  });

  it('looks a complaint without any token up by our header in its attachment, once it is parsed', async () => {
    const { reader, lookups, appended } = await readerWith(async () => report(complaint, ['ann@x.example'], MESSAGE));
    const decisions = await reader.handle([received('fbl@b.example')]);
    expect(decisions).toMatchObject([{ kind: 'Recorded', messageId: MESSAGE }]);
    expect(appended.map((event) => event.type)).toEqual(['MessageSpamComplaint', 'SuppressionAdded']);
    expect(lookups).toEqual([[], [MESSAGE]]);
  });
});
