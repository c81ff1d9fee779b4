import type { MessageAccepted } from '@sendline/domain';
import { describe, expect, it } from 'vitest';
import { senderCommands } from '../../src/commands';
import type { MessageLedger, RecipientEntry } from '../../src/ledger';
import { planDelivery, type DeliveryJob } from '../../src/plan';

const NOW = Date.UTC(2026, 10, 23, 12, 0);
const ANN = 'ann@example.net';
const BOB = 'bob@example.org';
const CAT = 'cat@example.com';

const accepted: MessageAccepted = {
  type: 'MessageAccepted',
  data: {
    messageId: 'm-1',
    from: { email: 'orders@shop.example' },
    to: [{ email: ANN }, { email: BOB }, { email: CAT }],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Your order',
    textBody: 'Thanks',
    headers: [],
    metadata: {},
    attachments: [],
    trackOpens: false,
    trackLinks: 'None',
    messageStream: 'outbound',
    sizeBytes: 64,
    activeRecipients: [ANN, BOB, CAT],
    suppressedRecipients: [],
    submittedAt: NOW - 1_000,
  },
  metadata: { eventId: 'e-accepted', organizationId: 'org-1', occurredAt: NOW - 1_000, schemaVersion: 1 },
};

const commands = senderCommands({ append: () => Promise.reject(new Error('planning appends nothing')) });

function job(overrides: Partial<DeliveryJob> = {}): DeliveryJob {
  return { accepted, acceptedValue: Buffer.from('accepted'), attempt: 1, ...overrides };
}

function ledger(entries: Record<string, RecipientEntry>, sent = false): MessageLedger {
  return { sent, recipients: new Map(Object.entries(entries)) };
}

const plan = (delivery: DeliveryJob, known?: MessageLedger) =>
  planDelivery(delivery, known, { commands, now: NOW, random: 0.5 });

describe('planning a delivery attempt', () => {
  it('given nothing done yet, when the first attempt is planned, then every recipient is sent to after MessageSent', () => {
    const first = plan(job());
    expect(first.toSend).toEqual([ANN, BOB, CAT]);
    expect(first.sent).toMatchObject([{ type: 'MessageSent', data: { messageId: 'm-1' } }]);
    expect(first.firstAttemptAt).toBe(NOW);
  });

  it('given an earlier run, then a 250 is taken from the guard, a held recipient is held, a recorded outcome is skipped', () => {
    const again = plan(
      job(),
      ledger(
        {
          [ANN]: { state: 'accepted', response: '250 OK', host: 'mx.example.net', at: NOW - 10 },
          [BOB]: { state: 'held', error: 'socket closed' },
          [CAT]: { state: 'done', outcome: 'HardBounced' },
        },
        true,
      ),
    );
    expect(again.fromGuard).toEqual([{ recipient: ANN, response: '250 OK', host: 'mx.example.net', at: NOW - 10 }]);
    expect(again.held).toEqual([BOB]);
    expect(again.toSend).toEqual([]);
    expect(again.skipped).toBe(1);
    // MessageSent was appended by that run.
    expect(again.sent).toEqual([]);
  });

  it('given a retry record for bob after 2 failed attempts, then he is Deferred after 2 and sent to on attempt 3', () => {
    const retry = plan(job({ attempt: 3, recipients: [BOB], firstAttemptAt: NOW - 60_000 }));
    expect(retry.toSend).toEqual([BOB]);
    expect(retry.sent).toEqual([]);
    expect(retry.firstAttemptAt).toBe(NOW - 60_000);
    if (retry.state.phase !== 'Sent') throw new Error('expected a sent message');
    expect(retry.state.recipients.get(BOB)).toEqual({ status: 'Deferred', failedAttempts: 2 });
  });

  it('given the ledger recorded attempt 3 deferred, when the record of attempt 3 is run again, then bob is skipped', () => {
    const repeated = plan(job({ attempt: 3, recipients: [BOB] }), ledger({ [BOB]: { state: 'deferred', attempt: 3 } }));
    expect(repeated.toSend).toEqual([]);
    expect(repeated.skipped).toBe(1);
  });
});
