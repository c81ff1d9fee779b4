import { describe, expect, it } from 'vitest';
import {
  messageDecider,
  type DeliveryOutcome,
  type MessageEvent,
  type RecipientOutcomeEvent,
} from '../../src/messages';
import { DeciderSpecification } from '../decider-spec';
import {
  ACCEPTED_AT,
  acceptMessage,
  aMessage,
  deferred,
  delivered,
  hardBounced,
  MESSAGE_ID,
  messageAccepted,
  messageDeferred,
  messageDelivered,
  messageSent,
  metadata,
  OTHER_ORG,
  policyRejected,
  recordOutcome,
  recordSent,
  SENT_AT,
  softBouncedRetriesExhausted,
} from './fixtures';

const spec = DeciderSpecification.for(messageDecider);
const OUTCOME_AT = SENT_AT + 1_000;
const outcomeMetadata = metadata('ev-outcome', OUTCOME_AT);

describe('message decider', () => {
  describe('when nothing was accepted yet', () => {
    it('accepts the message with every field, the recipients merged and lowercased, submittedAt from the clock', () => {
      spec
        .given([])
        .when(acceptMessage())
        .then([
          {
            type: 'MessageAccepted',
            data: {
              messageId: MESSAGE_ID,
              ...aMessage(),
              activeRecipients: ['alice@customer.example', 'bob@customer.example', 'audit@shop.example'],
              suppressedRecipients: [],
              submittedAt: ACCEPTED_AT,
            },
            metadata: metadata('ev-accepted', ACCEPTED_AT),
          },
        ]);
    });

    it('leaves suppressed recipients out of the active ones and lists them, whatever their case', () => {
      spec
        .given([])
        .when(acceptMessage({ suppressed: ['BOB@customer.example', 'someone-else@x.example'] }))
        .then([
          messageAccepted({
            activeRecipients: ['alice@customer.example', 'audit@shop.example'],
            suppressedRecipients: ['bob@customer.example'],
          }),
        ]);
    });

    it('merges a recipient given in To, Cc and Bcc in different cases into one', () => {
      const message = aMessage({
        to: [{ email: 'Carol@x.example' }],
        cc: [{ email: 'carol@X.EXAMPLE' }],
        bcc: [{ email: 'CAROL@x.example' }, { email: 'dave@x.example' }],
      });
      spec
        .given([])
        .when(acceptMessage({ message }))
        .then([
          {
            ...messageAccepted({ ...message, activeRecipients: ['carol@x.example', 'dave@x.example'] }),
          },
        ]);
    });

    it('refuses a message whose every recipient is suppressed, naming them', () => {
      spec
        .given([])
        .when(
          acceptMessage({
            suppressed: ['alice@customer.example', 'bob@customer.example', 'audit@shop.example'],
          }),
        )
        .thenThrows('AllRecipientsSuppressed', (error) => {
          expect(error.details).toEqual({
            suppressed: ['alice@customer.example', 'bob@customer.example', 'audit@shop.example'],
          });
        });
    });

    it('fails loudly when the command carries no event id', () => {
      spec
        .given([])
        .when(acceptMessage({ eventIds: [] }))
        .thenThrows('MissingEventId');
    });

    it('refuses RecordSent for a message never accepted', () => {
      spec.given([]).when(recordSent()).thenThrows('MessageNotAccepted');
    });

    it('refuses a delivery outcome for a message never accepted', () => {
      spec.given([]).when(recordOutcome('bob@customer.example', delivered)).thenThrows('MessageNotAccepted');
    });
  });

  describe('when accepted', () => {
    const given = [messageAccepted()];

    it('refuses to accept the same message again', () => {
      spec.given(given).when(acceptMessage()).thenThrows('MessageAlreadyAccepted');
    });

    it('records that the mail server took the message', () => {
      spec.given(given).when(recordSent()).then([messageSent()]);
    });

    it('refuses RecordSent naming another message', () => {
      spec
        .given(given)
        .when(recordSent({ messageId: 'another-message' }))
        .thenThrows('MessageIdMismatch');
    });

    it('refuses RecordSent from another organization', () => {
      spec
        .given(given)
        .when(recordSent({ organizationId: OTHER_ORG }))
        .thenThrows('OrganizationMismatch');
    });

    it('refuses a delivery outcome before the message was sent', () => {
      spec.given(given).when(recordOutcome('bob@customer.example', delivered)).thenThrows('MessageNotSent');
    });
  });

  describe('when sent', () => {
    const given: MessageEvent[] = [messageAccepted({ suppressedRecipients: ['eve@customer.example'] }), messageSent()];

    it('decides nothing when RecordSent runs again (at-least-once re-run)', () => {
      spec.given(given).when(recordSent()).thenNothingHappened();
    });

    it('records a delivery, matching the recipient case-insensitively', () => {
      spec
        .given(given)
        .when(recordOutcome('Bob@Customer.example', delivered))
        .then([
          {
            type: 'MessageDelivered',
            data: {
              messageId: MESSAGE_ID,
              recipient: 'bob@customer.example',
              smtpResponse: '250 2.0.0 OK queued as 4F2A1',
              destinationServer: 'mx1.customer.example',
            },
            metadata: outcomeMetadata,
          },
        ]);
    });

    it('records the envelope sender the attempt was made with (the recipient’s Return-Path) on its outcome', () => {
      const returnPath = 'b.abc@bounces.shop.example';
      spec
        .given(given)
        .when(recordOutcome('bob@customer.example', deferred(1), { returnPath }))
        .then([
          {
            type: 'MessageDeferred',
            data: expect.objectContaining({ recipient: 'bob@customer.example', returnPath, attempt: 1 }),
            metadata: outcomeMetadata,
          },
        ]);
    });

    it('records a hard bounce with its codes and summary', () => {
      spec
        .given(given)
        .when(recordOutcome('bob@customer.example', hardBounced))
        .then([
          {
            type: 'MessageHardBounced',
            data: {
              messageId: MESSAGE_ID,
              recipient: 'bob@customer.example',
              smtpResponse: '550 5.1.1 <bob@customer.example>: user unknown',
              statusCode: 550,
              enhancedStatus: '5.1.1',
              summary: 'Bad destination mailbox address',
            },
            metadata: outcomeMetadata,
          },
        ]);
    });

    it('records a policy rejection', () => {
      spec
        .given(given)
        .when(recordOutcome('bob@customer.example', policyRejected))
        .then([
          {
            type: 'MessagePolicyRejected',
            data: {
              messageId: MESSAGE_ID,
              recipient: 'bob@customer.example',
              smtpResponse: '550 5.7.26 Unauthenticated email is not accepted',
              statusCode: 550,
              enhancedStatus: '5.7.26',
              summary: 'Multiple authentication checks failed',
            },
            metadata: outcomeMetadata,
          },
        ]);
    });

    it('records a first deferral with the attempt number and the next attempt time', () => {
      spec
        .given(given)
        .when(recordOutcome('bob@customer.example', deferred(1)))
        .then([
          {
            type: 'MessageDeferred',
            data: {
              messageId: MESSAGE_ID,
              recipient: 'bob@customer.example',
              reason: 'response',
              smtpResponse: '451 4.2.0 Try again later',
              summary: 'Other or undefined mailbox status',
              attempt: 1,
              nextAttemptAt: SENT_AT + 60_000,
            },
            metadata: outcomeMetadata,
          },
        ]);
    });

    it('records a deferral after a timeout without an SMTP response', () => {
      const timeout: DeliveryOutcome = {
        kind: 'Deferred',
        reason: 'timeout',
        summary: 'The receiving server did not answer in time',
        attempt: 1,
        nextAttemptAt: OUTCOME_AT + 60_000,
      };
      spec
        .given(given)
        .when(recordOutcome('bob@customer.example', timeout))
        .then([
          {
            type: 'MessageDeferred',
            data: {
              messageId: MESSAGE_ID,
              recipient: 'bob@customer.example',
              reason: 'timeout',
              summary: 'The receiving server did not answer in time',
              attempt: 1,
              nextAttemptAt: OUTCOME_AT + 60_000,
            },
            metadata: outcomeMetadata,
          },
        ]);
    });

    it('records a soft bounce on a first attempt that got a permanent non-address failure (mailbox full)', () => {
      const mailboxFull: DeliveryOutcome = {
        kind: 'SoftBounced',
        reason: 'PermanentFailure',
        smtpResponse: '552 5.2.2 Mailbox full',
        summary: 'Mailbox full',
        attempts: 1,
      };
      spec
        .given(given)
        .when(recordOutcome('bob@customer.example', mailboxFull))
        .then([
          {
            type: 'MessageSoftBounced',
            data: {
              messageId: MESSAGE_ID,
              recipient: 'bob@customer.example',
              reason: 'PermanentFailure',
              smtpResponse: '552 5.2.2 Mailbox full',
              summary: 'Mailbox full',
              attempts: 1,
            },
            metadata: outcomeMetadata,
          },
        ]);
    });

    it('refuses an outcome for an address that is not a recipient', () => {
      spec
        .given(given)
        .when(recordOutcome('mallory@elsewhere.example', delivered))
        .thenThrows('RecipientNotInMessage', (error) => {
          expect(error.details).toEqual({ messageId: MESSAGE_ID, recipient: 'mallory@elsewhere.example' });
        });
    });

    it('refuses an outcome for a suppressed recipient, saying it was suppressed', () => {
      spec
        .given(given)
        .when(recordOutcome('eve@customer.example', delivered))
        .thenThrows('RecipientNotInMessage', (error) => {
          expect(error.message).toContain('suppressed');
        });
    });

    it('refuses an outcome naming another message', () => {
      const command = recordOutcome('bob@customer.example', delivered);
      spec
        .given(given)
        .when({ ...command, data: { ...command.data, messageId: 'another-message' } })
        .thenThrows('MessageIdMismatch');
    });
  });

  describe('when a recipient was deferred', () => {
    const given: MessageEvent[] = [messageAccepted(), messageSent(), messageDeferred('bob@customer.example', 2)];

    it('records a further deferral with a higher attempt number', () => {
      spec
        .given(given)
        .when(recordOutcome('bob@customer.example', deferred(3)))
        .then([
          {
            type: 'MessageDeferred',
            data: {
              messageId: MESSAGE_ID,
              recipient: 'bob@customer.example',
              reason: 'response',
              smtpResponse: '451 4.2.0 Try again later',
              summary: 'Other or undefined mailbox status',
              attempt: 3,
              nextAttemptAt: SENT_AT + 3 * 60_000,
            },
            metadata: outcomeMetadata,
          },
        ]);
    });

    it('decides nothing for a deferral of an attempt already recorded (a re-run)', () => {
      spec
        .given(given)
        .when(recordOutcome('bob@customer.example', deferred(2)))
        .thenNothingHappened();
    });

    it('decides nothing for a deferral of an older attempt', () => {
      spec
        .given(given)
        .when(recordOutcome('bob@customer.example', deferred(1)))
        .thenNothingHappened();
    });

    it('records the delivery of a retry', () => {
      spec
        .given(given)
        .when(recordOutcome('bob@customer.example', delivered))
        .then([{ ...messageDelivered('bob@customer.example'), metadata: outcomeMetadata }]);
    });

    it('records a soft bounce once retries are exhausted', () => {
      spec
        .given(given)
        .when(recordOutcome('bob@customer.example', softBouncedRetriesExhausted))
        .then([
          {
            type: 'MessageSoftBounced',
            data: {
              messageId: MESSAGE_ID,
              recipient: 'bob@customer.example',
              reason: 'RetriesExhausted',
              summary: 'The receiving server did not answer in time',
              attempts: 12,
            },
            metadata: outcomeMetadata,
          },
        ]);
    });
  });

  describe('when a recipient reached a terminal status', () => {
    const terminalEvents: Array<[string, RecipientOutcomeEvent]> = [
      ['Delivered', messageDelivered('bob@customer.example')],
      [
        'HardBounced',
        {
          type: 'MessageHardBounced',
          data: {
            messageId: MESSAGE_ID,
            recipient: 'bob@customer.example',
            smtpResponse: '550 5.1.1 user unknown',
            statusCode: 550,
            enhancedStatus: '5.1.1',
            summary: 'Bad destination mailbox address',
          },
          metadata: metadata('ev-hard', OUTCOME_AT),
        },
      ],
      [
        'PolicyRejected',
        {
          type: 'MessagePolicyRejected',
          data: {
            messageId: MESSAGE_ID,
            recipient: 'bob@customer.example',
            smtpResponse: '554 5.7.1 rejected',
            statusCode: 554,
            enhancedStatus: '5.7.1',
            summary: 'Delivery not authorized, message refused',
          },
          metadata: metadata('ev-policy', OUTCOME_AT),
        },
      ],
      [
        'SoftBounced',
        {
          type: 'MessageSoftBounced',
          data: {
            messageId: MESSAGE_ID,
            recipient: 'bob@customer.example',
            reason: 'RetriesExhausted',
            summary: 'gave up',
            attempts: 9,
          },
          metadata: metadata('ev-soft', OUTCOME_AT),
        },
      ],
    ];
    const outcomes: Array<[string, DeliveryOutcome]> = [
      ['Delivered', delivered],
      ['HardBounced', hardBounced],
      ['PolicyRejected', policyRejected],
      ['Deferred', deferred(5)],
      ['SoftBounced', softBouncedRetriesExhausted],
    ];

    for (const [status, terminal] of terminalEvents) {
      it.each(outcomes)(`decides nothing for a %s outcome once the recipient is ${status}`, (_, outcome) => {
        spec
          .given([messageAccepted(), messageSent(), terminal])
          .when(recordOutcome('bob@customer.example', outcome))
          .thenNothingHappened();
      });
    }

    it("still records the other recipients' outcomes", () => {
      spec
        .given([messageAccepted(), messageSent(), messageDelivered('bob@customer.example')])
        .when(recordOutcome('alice@customer.example', delivered))
        .then([{ ...messageDelivered('alice@customer.example'), metadata: outcomeMetadata }]);
    });
  });
});
