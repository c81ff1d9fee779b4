import { returnPathKey, returnPathAddress, type ReturnedMessageState } from '@sendline/infra';
import type { ReturnedOutcome } from '@sendline/domain';
import { describe, expect, it } from 'vitest';
import { decideReturn, messageOf, type ReadReport, type ReceivedMail } from '../../src';

const key = returnPathKey(Buffer.alloc(32, 1));
const MESSAGE = '6b1f3c2a-9d4e-4f5a-8b7c-0d1e2f3a4b5c';
const ORG = 'org-a';
const RECEIVED_AT = Date.UTC(2026, 10, 28, 12);

function state(recipients: Record<string, 'Delivered' | 'HardBounced' | 'Queued'>): ReturnedMessageState {
  return {
    phase: 'Sent',
    messageId: MESSAGE,
    organizationId: ORG,
    recipients: new Map(Object.entries(recipients).map(([a, status]) => [a, { status, failedAttempts: 0 }])),
    suppressedRecipients: [],
  };
}

function mailTo(recipientIndex: number, receivedId = 'r-1'): ReceivedMail {
  return {
    receivedId,
    envelopeTo: [returnPathAddress(key, { messageId: MESSAGE, recipientIndex }, 'bounces.shop.example')],
    receivedAt: RECEIVED_AT,
  };
}

const userUnknown: ReturnedOutcome = {
  kind: 'HardBounced',
  smtpResponse: 'smtp; 550 5.1.1 user unknown',
  statusCode: 550,
  enhancedStatus: '5.1.1',
  summary: 'Bad destination mailbox address',
};

function report(outcome: ReturnedOutcome | undefined, named: string[] = [], sendlineMessageId?: string): ReadReport {
  return {
    namedRecipients: named,
    ...(sendlineMessageId && { sendlineMessageId }),
    outcomeOf: () => outcome,
  };
}

describe('which message and recipient a returned mail is about', () => {
  it('reads them from the signed token of the address the mail came to', () => {
    expect(messageOf(key, mailTo(1), report(undefined))).toEqual({ messageId: MESSAGE, recipientIndex: 1 });
  });

  it('tells a forged token from no token at all', () => {
    const forged = { ...mailTo(0), envelopeTo: [`b.${'a'.repeat(44)}@bounces.shop.example`] };
    expect(messageOf(key, forged, report(undefined))).toMatchObject({ unmatched: 'ForgedToken' });
    const none = { ...mailTo(0), envelopeTo: ['postmaster@bounces.shop.example'] };
    expect(messageOf(key, none, report(undefined))).toMatchObject({ unmatched: 'NoToken' });
  });

  it('trusts nothing in a mail whose token does not verify, not even our header in its attachment', () => {
    const forged = { ...mailTo(0), envelopeTo: [`b.${'a'.repeat(44)}@bounces.shop.example`] };
    expect(messageOf(key, forged, report(undefined, [], MESSAGE))).toMatchObject({ unmatched: 'ForgedToken' });
  });

  it('falls back on the message id our header carries in the attached original (a feedback loop)', () => {
    const none = { ...mailTo(0), envelopeTo: ['fbl@bounces.shop.example'] };
    expect(messageOf(key, none, report(undefined, [], MESSAGE))).toEqual({ messageId: MESSAGE });
  });

  it("a token of another deployment's key is forged here", () => {
    const otherKey = returnPathKey(Buffer.alloc(32, 2));
    const mail = {
      ...mailTo(0),
      envelopeTo: [returnPathAddress(otherKey, { messageId: MESSAGE, recipientIndex: 0 }, 'x.example')],
    };
    expect(messageOf(key, mail, report(undefined))).toMatchObject({ unmatched: 'ForgedToken' });
  });
});

describe('what a returned mail records', () => {
  const delivered = state({ 'ann@x.example': 'Delivered', 'bob@y.example': 'Delivered' });

  it("a DSN's hard bounce: the token's recipient bounces and is suppressed, in the message's organization", () => {
    const decision = decideReturn(mailTo(1), report(userUnknown), { messageId: MESSAGE, recipientIndex: 1 }, delivered);
    expect(decision.kind).toBe('Recorded');
    if (decision.kind !== 'Recorded') return;
    expect(decision.events.map((e) => [e.type, e.metadata.organizationId])).toEqual([
      ['MessageHardBounced', ORG],
      ['SuppressionAdded', ORG],
    ]);
    expect(decision.events[0]!.data).toMatchObject({ recipient: 'bob@y.example', reportId: 'r-1' });
    expect(decision.suppressions[0]!.data).toMatchObject({ emailAddress: 'bob@y.example', reason: 'HardBounce' });
  });

  it('the same mail read twice, or a second DSN for the recipient, records the same events (same ids)', () => {
    const target = { messageId: MESSAGE, recipientIndex: 0 };
    const first = decideReturn(mailTo(0, 'r-1'), report(userUnknown), target, delivered);
    const again = decideReturn(mailTo(0, 'r-2'), report(userUnknown), target, delivered);
    expect(first.kind === 'Recorded' && again.kind === 'Recorded').toBe(true);
    if (first.kind !== 'Recorded' || again.kind !== 'Recorded') return;
    expect(again.events.map((e) => e.metadata.eventId)).toEqual(first.events.map((e) => e.metadata.eventId));
  });

  it('a recipient that already bounced records nothing new', () => {
    const bounced = state({ 'ann@x.example': 'HardBounced' });
    expect(decideReturn(mailTo(0), report(userUnknown), { messageId: MESSAGE, recipientIndex: 0 }, bounced)).toEqual({
      kind: 'NothingNew',
      messageId: MESSAGE,
      recipient: 'ann@x.example',
    });
  });

  it('a complaint suppresses with reason SpamComplaint', () => {
    const decision = decideReturn(
      mailTo(0),
      report({ kind: 'SpamComplaint', feedbackType: 'abuse', summary: 'spam' }),
      { messageId: MESSAGE, recipientIndex: 0 },
      delivered,
    );
    expect(decision.kind === 'Recorded' && decision.suppressions.map((s) => s.data)).toEqual([
      expect.objectContaining({ emailAddress: 'ann@x.example', reason: 'SpamComplaint', origin: 'Recipient' }),
    ]);
  });

  it('an automatic reply suppresses nothing, and each one is its own event', () => {
    const auto: ReturnedOutcome = { kind: 'AutoReplied', summary: 'Out of office' };
    const target = { messageId: MESSAGE, recipientIndex: 0 };
    const one = decideReturn(mailTo(0, 'r-1'), report(auto), target, delivered);
    const two = decideReturn(mailTo(0, 'r-2'), report(auto), target, delivered);
    if (one.kind !== 'Recorded' || two.kind !== 'Recorded') throw new Error('not recorded');
    expect(one.suppressions).toEqual([]);
    expect(one.events[0]!.metadata.eventId).not.toBe(two.events[0]!.metadata.eventId);
  });

  it('without a token, the recipient the report names among the message’s own', () => {
    const decision = decideReturn(
      { ...mailTo(0), envelopeTo: ['fbl@x'] },
      report({ kind: 'SpamComplaint', feedbackType: 'abuse', summary: 's' }, ['bob@y.example']),
      { messageId: MESSAGE },
      delivered,
    );
    expect(decision.kind === 'Recorded' && decision.recipient).toBe('bob@y.example');
  });

  it('is unmatched, changing nothing: an unknown message, a recipient not named, an unreadable report', () => {
    const target = { messageId: MESSAGE };
    expect(decideReturn(mailTo(0), report(userUnknown), target, undefined)).toMatchObject({
      kind: 'Unmatched',
      reason: 'UnknownMessage',
    });
    expect(decideReturn(mailTo(0), report(userUnknown, ['eve@z.example']), target, delivered)).toMatchObject({
      kind: 'Unmatched',
      reason: 'UnknownRecipient',
    });
    expect(
      decideReturn(mailTo(0), { ...report(userUnknown), unreadable: 'no report part' }, target, delivered),
    ).toMatchObject({ kind: 'Unmatched', reason: 'Unreadable' });
  });
});
