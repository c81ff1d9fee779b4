import { describe, expect, it } from 'vitest';
import type {
  MessageAutoReplied,
  MessageDelayReported,
  MessageDelivered,
  MessageHardBounced,
  MessageSpamComplaint,
  SuppressionAdded,
  SuppressionDeleted,
} from '@sendline/domain';
import { bounceIdOf } from '@sendline/infra';
import { bouncePayload, deliveryPayload, numericId, spamComplaintPayload, subscriptionChangePayload } from '../../src';
import { AT, meta, MESSAGE_ID, ORG, SUMMARY } from './fixtures';

const delivered: MessageDelivered = {
  type: 'MessageDelivered',
  data: {
    messageId: MESSAGE_ID,
    recipient: 'alice@customer.example',
    smtpResponse: '250 2.0.0 OK queued as 1234',
    destinationServer: 'mx.customer.example',
  },
  metadata: meta('e-1'),
};

const hardBounced: MessageHardBounced = {
  type: 'MessageHardBounced',
  data: {
    messageId: MESSAGE_ID,
    recipient: 'bob@customer.example',
    smtpResponse: '550 5.1.1 <bob@customer.example>: user unknown',
    statusCode: 550,
    enhancedStatus: '5.1.1',
    summary: 'Bad destination mailbox address',
  },
  metadata: meta('7c9e6679-7425-40de-944b-e07fc1f90ae7'),
};

/** What came back after the SMTP conversation, each carried by a received mail (its reportId). */
const dsnHardBounced: MessageHardBounced = {
  type: 'MessageHardBounced',
  data: {
    messageId: MESSAGE_ID,
    recipient: 'alice@customer.example',
    smtpResponse: 'smtp; 550 5.1.1 <alice@customer.example>: mailbox disabled',
    statusCode: 550,
    enhancedStatus: '5.1.1',
    summary: 'Bad destination mailbox address',
    reportId: 'report-1',
  },
  metadata: meta('1b4e28ba-2fa1-51d2-883f-0016d3cca427', ORG, AT + 3_600_000),
};
const complained: MessageSpamComplaint = {
  type: 'MessageSpamComplaint',
  data: {
    messageId: MESSAGE_ID,
    recipient: 'alice@customer.example',
    feedbackType: 'abuse',
    userAgent: 'Yahoo!-Mail-Feedback/2.0',
    summary: 'Reported as spam (abuse) by the recipient’s provider',
    reportId: 'report-2',
  },
  metadata: meta('6fa459ea-ee8a-5ca4-894e-db77e160355e', ORG, AT + 7_200_000),
};
const autoReplied: MessageAutoReplied = {
  type: 'MessageAutoReplied',
  data: { messageId: MESSAGE_ID, recipient: 'carol@customer.example', summary: 'Out of office', reportId: 'report-3' },
  metadata: meta('16fd2706-8baf-533b-8f3b-1b0a0b1b1b1b'),
};
const delayReported: MessageDelayReported = {
  type: 'MessageDelayReported',
  data: {
    messageId: MESSAGE_ID,
    recipient: 'dan@customer.example',
    summary: 'Delivery delayed',
    enhancedStatus: '4.4.7',
    smtpResponse: 'smtp; 451 4.4.7 Delivery time expired',
    reportId: 'report-4',
  },
  metadata: meta('886313e1-3b8a-5372-9b90-0c9aee199e5d'),
};

describe("Postmark's webhook bodies", () => {
  it('a delivery carries the receiving server’s answer and the message’s Tag, Metadata and stream', () => {
    expect(deliveryPayload(delivered, SUMMARY)).toEqual({
      RecordType: 'Delivery',
      ServerID: numericId(ORG),
      MessageStream: 'outbound',
      MessageID: MESSAGE_ID,
      Recipient: 'alice@customer.example',
      Tag: 'invoice',
      DeliveredAt: new Date(AT).toISOString(),
      Details: '250 2.0.0 OK queued as 1234',
      Metadata: { customerId: 'c-42' },
    });
  });

  it('a hard bounce is Type HardBounce, TypeCode 1, its address inactive and reactivable', () => {
    const body = bouncePayload(hardBounced, SUMMARY);
    expect(body).toMatchObject({
      RecordType: 'Bounce',
      Type: 'HardBounce',
      TypeCode: 1,
      Name: 'Hard bounce',
      Email: 'bob@customer.example',
      From: 'billing@shop.example',
      Subject: 'Your invoice',
      Details: '550 5.1.1 <bob@customer.example>: user unknown',
      BouncedAt: new Date(AT).toISOString(),
      Inactive: true,
      CanActivate: true,
      DumpAvailable: false,
      MessageID: MESSAGE_ID,
      Tag: 'invoice',
      Metadata: { customerId: 'c-42' },
      MessageStream: 'outbound',
    });
    // The ID the bounce endpoints give the same bounce: GET /bounces/{ID} reads it, PUT …/activate reactivates it.
    expect(body.ID).toBe(bounceIdOf(hardBounced.metadata.eventId));
    expect(Number.isSafeInteger(body.ID) && body.ID > 0).toBe(true);
  });

  it('a hard bounce a DSN reported after the delivery is the same Bounce, its Details the DSN’s diagnostic', () => {
    expect(bouncePayload(dsnHardBounced, SUMMARY)).toMatchObject({
      RecordType: 'Bounce',
      ID: bounceIdOf(dsnHardBounced.metadata.eventId),
      Type: 'HardBounce',
      TypeCode: 1,
      Email: 'alice@customer.example',
      Details: 'smtp; 550 5.1.1 <alice@customer.example>: mailbox disabled',
      BouncedAt: new Date(AT + 3_600_000).toISOString(),
      Inactive: true,
      CanActivate: true,
    });
  });

  it('a spam complaint is Postmark’s SpamComplaint body: the Bounce’s fields, its address inactive', () => {
    expect(spamComplaintPayload(complained, SUMMARY)).toEqual({
      RecordType: 'SpamComplaint',
      ID: bounceIdOf(complained.metadata.eventId),
      Type: 'SpamComplaint',
      TypeCode: 100001,
      Name: 'Spam complaint',
      Tag: 'invoice',
      MessageID: MESSAGE_ID,
      Metadata: { customerId: 'c-42' },
      ServerID: numericId(ORG),
      MessageStream: 'outbound',
      Description: 'The subscriber explicitly marked this message as spam.',
      Details: 'Reported as spam (abuse) by the recipient’s provider',
      Email: 'alice@customer.example',
      From: 'billing@shop.example',
      BouncedAt: new Date(AT + 7_200_000).toISOString(),
      DumpAvailable: false,
      Inactive: true,
      CanActivate: true,
      Subject: 'Your invoice',
    });
  });

  it('an automatic reply is a Bounce of type AutoResponder, a DSN’s delay notice one of type Transient; neither suppresses', () => {
    expect(bouncePayload(autoReplied, SUMMARY)).toMatchObject({
      RecordType: 'Bounce',
      Type: 'AutoResponder',
      TypeCode: 64,
      Name: 'Auto responder',
      Details: 'Out of office',
      Inactive: false,
      CanActivate: false,
    });
    expect(bouncePayload(delayReported, SUMMARY)).toMatchObject({
      RecordType: 'Bounce',
      Type: 'Transient',
      TypeCode: 2,
      Name: 'Message delayed',
      Details: 'smtp; 451 4.4.7 Delivery time expired',
      Inactive: false,
    });
  });

  it('a soft bounce and a policy refusal keep the address active', () => {
    const soft = bouncePayload(
      {
        type: 'MessageSoftBounced',
        data: {
          messageId: MESSAGE_ID,
          recipient: 'c@x.example',
          reason: 'retries-exhausted',
          summary: 'gave up',
          attempts: 5,
        },
        metadata: meta('e-3'),
      } as never,
      SUMMARY,
    );
    expect(soft).toMatchObject({ Type: 'SoftBounce', TypeCode: 4096, Inactive: false, Details: 'gave up' });
    const blocked = bouncePayload({ ...hardBounced, type: 'MessagePolicyRejected' } as never, SUMMARY);
    expect(blocked).toMatchObject({ Type: 'Blocked', TypeCode: 100006, Inactive: false });
  });

  it('a suppression added is a SubscriptionChange that suppresses sending, with its reason and origin', () => {
    const added: SuppressionAdded = {
      type: 'SuppressionAdded',
      data: { emailAddress: 'bob@customer.example', reason: 'HardBounce', origin: 'Recipient', createdAt: AT },
      metadata: meta('e-4'),
    };
    expect(subscriptionChangePayload(added)).toEqual({
      RecordType: 'SubscriptionChange',
      MessageID: null,
      ServerID: numericId(ORG),
      MessageStream: 'outbound',
      ChangedAt: new Date(AT).toISOString(),
      Recipient: 'bob@customer.example',
      Origin: 'Recipient',
      SuppressSending: true,
      SuppressionReason: 'HardBounce',
      Tag: '',
      Metadata: {},
    });
  });

  it('a suppression deleted reactivates the address: SuppressSending false, no reason', () => {
    const deleted: SuppressionDeleted = {
      type: 'SuppressionDeleted',
      data: { emailAddress: 'bob@customer.example' },
      metadata: meta('e-5'),
    };
    expect(subscriptionChangePayload(deleted)).toMatchObject({
      SuppressSending: false,
      SuppressionReason: null,
      Origin: 'Customer',
    });
  });

  it('numeric ids are stable, positive and safe integers', () => {
    expect(numericId(ORG)).toBe(numericId(ORG));
    expect(numericId(ORG)).not.toBe(numericId('another'));
    expect(numericId(ORG)).toBeGreaterThan(0);
    expect(Number.isSafeInteger(numericId(ORG))).toBe(true);
  });
});
