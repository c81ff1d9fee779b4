import { describe, expect, it } from 'vitest';
import type { MessageDelivered, MessageHardBounced, SuppressionAdded, SuppressionDeleted } from '@sendline/domain';
import { bouncePayload, deliveryPayload, numericId, subscriptionChangePayload } from '../../src';
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
  metadata: meta('e-2'),
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
    expect(Number.isSafeInteger(body.ID)).toBe(true);
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
