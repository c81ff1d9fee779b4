import { randomBytes } from 'node:crypto';
import type { MessageAccepted } from '@sendline/domain';
import { readReturnPathAddress, returnPathKey, type SmtpDelivery, type SmtpTransaction } from '@sendline/infra';
import { describe, expect, it } from 'vitest';
import { senderCommands } from '../../src/commands';
import { outgoingOf } from '../../src/compose';
import { deliver } from '../../src/deliver';
import type { DeliveryLedger } from '../../src/ledger';
import { Limiter } from '../../src/limiter';
import { planDelivery, type DeliveryJob } from '../../src/plan';

/**
 * The envelope of step 4 (deliver.ts): every recipient is its own SMTP transaction, sent with its own envelope
 * sender `b.<token>@<return-path domain>` whose token reads back to the message and the recipient, and the one
 * signed copy of the message's bytes; the return-path domain is the From domain's verified return path, else the
 * service's own.
 */

const NOW = Date.UTC(2026, 10, 28, 12, 0);
const MESSAGE_ID = '0b6f1c9e-5d2a-4e7b-9c3f-2a1d4e5f6a7b';
const key = returnPathKey(randomBytes(32));
const service = { key, domain: 'bounces.sendline.dev' };

const accepted: MessageAccepted = {
  type: 'MessageAccepted',
  data: {
    messageId: MESSAGE_ID,
    from: { email: 'orders@shop.example' },
    to: [{ email: 'ann@example.net' }, { email: 'Bob@Example.org' }],
    cc: [{ email: 'cat@example.net' }],
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
    activeRecipients: ['ann@example.net', 'bob@example.org', 'cat@example.net'],
    suppressedRecipients: [],
    submittedAt: NOW - 1_000,
  },
  metadata: { eventId: 'e-accepted', organizationId: 'org-1', occurredAt: NOW - 1_000, schemaVersion: 1 },
};

const commands = senderCommands({ append: () => Promise.reject(new Error('planning appends nothing')) });

function job(overrides: Partial<DeliveryJob> = {}): DeliveryJob {
  return { accepted, acceptedValue: Buffer.from('accepted'), attempt: 1, ...overrides };
}

/** A transport that takes every recipient and remembers each transaction, and a ledger that remembers guards. */
function fakes() {
  const transactions: { domain: string; transaction: SmtpTransaction }[] = [];
  const guards: { recipients: readonly string[]; returnPath: string }[] = [];
  const delivery = {
    send: async (domain: string, transaction: SmtpTransaction) => {
      transactions.push({ domain, transaction });
      return transaction.envelope.to.map((recipient) => ({
        recipient,
        accepted: true as const,
        response: '250 2.0.0 OK',
        host: `mx.${domain}`,
      }));
    },
  } as unknown as SmtpDelivery;
  const ledger = {
    markAccepted: async (
      _messageId: string,
      recipients: readonly string[],
      _response: string,
      _host: string,
      returnPath: string,
    ) => {
      guards.push({ recipients, returnPath });
      return NOW;
    },
  } as unknown as DeliveryLedger;
  return { transactions, guards, deps: { delivery, ledger, limiter: new Limiter(10), now: () => NOW } };
}

const plan = (delivery: DeliveryJob) => planDelivery(delivery, undefined, { commands, now: NOW, random: 0.5 });

describe('the envelope of each recipient', () => {
  it('is its own transaction with its own envelope sender, whose token reads back to the message and the recipient', async () => {
    const { transactions, deps } = fakes();
    const raw = Buffer.from('the signed message');
    const outgoing = { raw, returnPath: { key, domain: 'bounces.shop.example' } };

    const result = await deliver(plan(job()), outgoing, deps);

    expect(result.transactions).toBe(3);
    expect(transactions.map(({ domain, transaction }) => [domain, transaction.envelope.to])).toEqual([
      ['example.net', ['ann@example.net']],
      ['example.org', ['Bob@Example.org']], // as the request spelt it
      ['example.net', ['cat@example.net']],
    ]);
    const senders = transactions.map(({ transaction }) => transaction.envelope.from);
    expect(new Set(senders).size).toBe(3);
    senders.forEach((sender, index) => {
      expect(sender).toMatch(/^b\.[a-z2-7]{44}@bounces\.shop\.example$/);
      expect(readReturnPathAddress(key, sender)).toEqual({ ok: true, messageId: MESSAGE_ID, recipientIndex: index });
    });
    // One copy of the bytes (and of their DKIM signature) for every recipient.
    for (const { transaction } of transactions) expect(transaction.raw).toBe(raw);
    expect([...result.returnPaths.values()]).toEqual(senders);
  });

  it('writes each guard with the envelope sender its recipient was sent with', async () => {
    const { transactions, guards, deps } = fakes();
    await deliver(plan(job()), { raw: Buffer.from('x'), returnPath: service }, deps);
    expect(guards).toEqual(
      transactions.map(({ transaction }) => ({
        recipients: [transaction.envelope.to[0]!.toLowerCase()],
        returnPath: transaction.envelope.from,
      })),
    );
  });

  it('names a retried recipient by its index among all the active recipients, not among the retried ones', async () => {
    const { transactions, deps } = fakes();
    await deliver(
      plan(job({ attempt: 2, recipients: ['cat@example.net'] })),
      { raw: Buffer.from('x'), returnPath: service },
      deps,
    );
    expect(transactions).toHaveLength(1);
    expect(readReturnPathAddress(key, transactions[0]!.transaction.envelope.from)).toEqual({
      ok: true,
      messageId: MESSAGE_ID,
      recipientIndex: 2,
    });
  });

  it('gives the same envelope sender to the same recipient on every attempt', async () => {
    const first = fakes();
    const second = fakes();
    const outgoing = { raw: Buffer.from('x'), returnPath: service };
    await deliver(plan(job()), outgoing, first.deps);
    await deliver(plan(job({ attempt: 2, recipients: ['bob@example.org'] })), outgoing, second.deps);
    expect(second.transactions[0]!.transaction.envelope.from).toBe(first.transactions[1]!.transaction.envelope.from);
  });
});

describe('the return-path domain', () => {
  it('is the From domain’s return path when it is verified', () => {
    const raw = Buffer.from('x');
    expect(outgoingOf({ raw, returnPathHost: 'bounces.shop.example' }, service)).toEqual({
      raw,
      returnPath: { key, domain: 'bounces.shop.example' },
    });
  });

  it('is the service’s own when the From domain’s return path is not verified', () => {
    const raw = Buffer.from('x');
    expect(outgoingOf({ raw, returnPathHost: null }, service)).toEqual({
      raw,
      returnPath: { key, domain: 'bounces.sendline.dev' },
    });
  });

  it('is none for a message that could not be signed: nothing leaves', () => {
    expect(outgoingOf({ failure: new Error('no key') }, service)).toBeUndefined();
    expect(outgoingOf(undefined, service)).toBeUndefined();
  });
});
