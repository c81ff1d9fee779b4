import { describe, expect, it } from 'vitest';
import {
  classifyDeliveryAttempt,
  messageDecider,
  returnedOutcomeOf,
  type RecordReturn,
  type ReturnedOutcome,
} from '../../src/messages';
import { DeciderSpecification } from '../decider-spec';
import {
  hardBounced,
  MESSAGE_ID,
  messageAccepted,
  messageDelivered,
  messageSent,
  metadata,
  ORG,
  OTHER_ORG,
  recordOutcome,
  SENT_AT,
} from './fixtures';

const spec = DeciderSpecification.for(messageDecider);
const REPORTED_AT = SENT_AT + 3_600_000;
const REPORT = 'a0e1c9d2-0000-4000-8000-000000000001';
const ALICE = 'alice@customer.example';

function recordReturn(outcome: ReturnedOutcome, options: { recipient?: string; organizationId?: string } = {}) {
  return {
    type: 'RecordReturn',
    data: { messageId: MESSAGE_ID, recipient: options.recipient ?? ALICE, reportId: REPORT, outcome },
    metadata: { organizationId: options.organizationId ?? ORG, now: REPORTED_AT, eventIds: ['ev-return'] },
  } satisfies RecordReturn;
}

const userUnknown: ReturnedOutcome = {
  kind: 'HardBounced',
  smtpResponse: 'smtp; 550 5.1.1 <alice@customer.example>: user unknown',
  statusCode: 550,
  enhancedStatus: '5.1.1',
  summary: 'Bad destination mailbox address',
};
const complaint: ReturnedOutcome = { kind: 'SpamComplaint', feedbackType: 'abuse', summary: 'Reported as spam' };
const delivered = [messageAccepted(), messageSent(), messageDelivered(ALICE)];
const returnMetadata = metadata('ev-return', REPORTED_AT);

describe('mail that came back about a message', () => {
  describe('when the recipient was delivered (the server said 250)', () => {
    it('a DSN that refuses the recipient for good hard-bounces it after all, naming the report', () => {
      spec
        .given(delivered)
        .when(recordReturn(userUnknown))
        .then([
          {
            type: 'MessageHardBounced',
            data: {
              messageId: MESSAGE_ID,
              recipient: ALICE,
              smtpResponse: userUnknown.smtpResponse,
              statusCode: 550,
              enhancedStatus: '5.1.1',
              summary: 'Bad destination mailbox address',
              reportId: REPORT,
            },
            metadata: returnMetadata,
          },
        ]);
    });

    it('a mailbox-full DSN soft-bounces it, as a permanent failure', () => {
      spec
        .given(delivered)
        .when(recordReturn({ kind: 'SoftBounced', smtpResponse: 'smtp; 552 5.2.2 full', summary: 'Mailbox full' }))
        .then([
          {
            type: 'MessageSoftBounced',
            data: {
              messageId: MESSAGE_ID,
              recipient: ALICE,
              reason: 'PermanentFailure',
              smtpResponse: 'smtp; 552 5.2.2 full',
              summary: 'Mailbox full',
              attempts: 1,
              reportId: REPORT,
            },
            metadata: returnMetadata,
          },
        ]);
    });

    it('a spam complaint is recorded and the recipient stays delivered', () => {
      spec
        .given(delivered)
        .when(recordReturn(complaint))
        .then([
          {
            type: 'MessageSpamComplaint',
            data: {
              messageId: MESSAGE_ID,
              recipient: ALICE,
              feedbackType: 'abuse',
              summary: 'Reported as spam',
              reportId: REPORT,
            },
            metadata: returnMetadata,
          },
        ]);
    });

    it('an automatic reply and a delay notice are recorded each time one comes', () => {
      spec
        .given(delivered)
        .when(recordReturn({ kind: 'AutoReplied', summary: 'Out of office' }))
        .then([
          {
            type: 'MessageAutoReplied',
            data: { messageId: MESSAGE_ID, recipient: ALICE, summary: 'Out of office', reportId: REPORT },
            metadata: returnMetadata,
          },
        ]);
      spec
        .given(delivered)
        .when(recordReturn({ kind: 'DelayReported', enhancedStatus: '4.4.7', summary: 'Delivery time expired' }))
        .then([
          {
            type: 'MessageDelayReported',
            data: {
              messageId: MESSAGE_ID,
              recipient: ALICE,
              summary: 'Delivery time expired',
              enhancedStatus: '4.4.7',
              reportId: REPORT,
            },
            metadata: returnMetadata,
          },
        ]);
    });

    it('finds the recipient whatever the case the report spelt it in', () => {
      spec
        .given(delivered)
        .when(recordReturn(complaint, { recipient: 'ALICE@Customer.Example' }))
        .then([expect.objectContaining({ type: 'MessageSpamComplaint' })]);
    });
  });

  describe('when the recipient already bounced or complained', () => {
    const bounced = [...delivered, { type: 'MessageHardBounced' as const, ...hardBouncedEvent() }];
    function hardBouncedEvent() {
      return {
        data: { messageId: MESSAGE_ID, recipient: ALICE, smtpResponse: 'x', statusCode: 550, summary: 'x' },
        metadata: metadata('ev-bounce', REPORTED_AT),
      };
    }

    it('a second DSN for the same recipient decides nothing: one hard bounce per recipient and message', () => {
      spec.given(bounced).when(recordReturn(userUnknown)).thenNothingHappened();
    });

    it('a recipient refused during the SMTP conversation is not bounced again by a DSN', () => {
      spec
        .given([messageAccepted(), messageSent()])
        .when(recordOutcome(ALICE, hardBounced))
        .then([expect.objectContaining({ type: 'MessageHardBounced' })]);
      spec
        .given([messageAccepted(), messageSent(), { type: 'MessageHardBounced', ...hardBouncedEvent() }])
        .when(recordReturn({ ...userUnknown, kind: 'PolicyRejected' }))
        .thenNothingHappened();
    });

    it('a second complaint of the same recipient decides nothing', () => {
      spec
        .given([
          ...delivered,
          {
            type: 'MessageSpamComplaint',
            data: { messageId: MESSAGE_ID, recipient: ALICE, feedbackType: 'abuse', summary: 's', reportId: 'r' },
            metadata: metadata('ev-c', REPORTED_AT),
          },
        ])
        .when(recordReturn(complaint))
        .thenNothingHappened();
    });

    it('the sender cannot move a delivered recipient: only a report that comes back does', () => {
      spec.given(delivered).when(recordOutcome(ALICE, hardBounced)).thenNothingHappened();
    });
  });

  describe('when the report does not fit the message', () => {
    it('refuses a message never accepted', () => {
      spec.given([]).when(recordReturn(userUnknown)).thenThrows('MessageNotAccepted');
    });

    it("refuses another organization's message: a report changes nothing of an organization it is not about", () => {
      spec
        .given(delivered)
        .when(recordReturn(userUnknown, { organizationId: OTHER_ORG }))
        .thenThrows('OrganizationMismatch');
    });

    it('refuses an address that is not a recipient of the message', () => {
      spec
        .given(delivered)
        .when(recordReturn(userUnknown, { recipient: 'mallory@x.example' }))
        .thenThrows('RecipientNotInMessage');
    });
  });
});

describe('what a DSN status means, by the classifier of SMTP answers', () => {
  it.each([
    [{ kind: 'response', code: 550, text: '550 5.1.1 user unknown' }, 'HardBounced'],
    [{ kind: 'response', code: 550, text: '550 5.7.1 message refused as spam' }, 'PolicyRejected'],
    [{ kind: 'response', code: 552, text: '552 5.2.2 mailbox full' }, 'SoftBounced'],
    [{ kind: 'response', code: 451, text: '451 4.4.7 delivery time expired' }, 'DelayReported'],
  ] as const)('%j → %s', (attempt, kind) => {
    expect(returnedOutcomeOf(classifyDeliveryAttempt(attempt))?.kind).toBe(kind);
  });

  it('a DSN saying delivered changes nothing', () => {
    expect(returnedOutcomeOf(classifyDeliveryAttempt({ kind: 'response', code: 250, text: '250 OK' }))).toBe(undefined);
  });
});
