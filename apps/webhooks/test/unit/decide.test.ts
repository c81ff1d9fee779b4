import { describe, expect, it } from 'vitest';
import type { MessageDelivered, SuppressionAdded } from '@sendline/domain';
import { callIdOf } from '@sendline/infra';
import { decideCalls } from '../../src';
import { aWebhook, AT, meta, MESSAGE_ID, OTHER_ORG, SUMMARY } from './fixtures';

const delivered: MessageDelivered = {
  type: 'MessageDelivered',
  data: { messageId: MESSAGE_ID, recipient: 'a@x.example', smtpResponse: '250 OK', destinationServer: 'mx.x.example' },
  metadata: meta('event-1'),
};
const suppressed: SuppressionAdded = {
  type: 'SuppressionAdded',
  data: { emailAddress: 'a@x.example', reason: 'ManualSuppression', origin: 'Customer', createdAt: AT },
  metadata: meta('event-2'),
};

describe('deciding the calls of an event', () => {
  it('calls every webhook of the organization whose trigger is on, each with its own stable id', () => {
    const webhooks = [aWebhook(1, { delivery: true }), aWebhook(2, { bounce: true }), aWebhook(3, { delivery: true })];
    const calls = decideCalls(delivered, webhooks, SUMMARY, AT);
    expect(calls.map((call) => call.data.webhookId)).toEqual([1, 3]);
    expect(calls.map((call) => call.data.callId)).toEqual([callIdOf('event-1', 1), callIdOf('event-1', 3)]);
    expect(calls[0]!.data).toMatchObject({ attempt: 1, retry: 0, dueAt: AT, manual: false, recordType: 'Delivery' });
    expect(JSON.parse(calls[0]!.data.body)).toMatchObject({ RecordType: 'Delivery', Tag: 'invoice' });
  });

  it('decided again, the same event gives the same calls (same ids, same record ids)', () => {
    const webhooks = [aWebhook(1, { delivery: true })];
    const first = decideCalls(delivered, webhooks, SUMMARY, AT);
    const again = decideCalls(delivered, webhooks, SUMMARY, AT + 5000);
    expect(again[0]!.data.callId).toBe(first[0]!.data.callId);
    expect(again[0]!.metadata.eventId).toBe(first[0]!.metadata.eventId);
  });

  it("never calls another organization's webhooks", () => {
    expect(decideCalls(delivered, [aWebhook(1, { delivery: true }, OTHER_ORG)], SUMMARY, AT)).toEqual([]);
  });

  it('a suppression change goes to the webhooks with SubscriptionChange on', () => {
    const calls = decideCalls(
      suppressed,
      [aWebhook(1, { delivery: true }), aWebhook(2, { subscriptionChange: true })],
      undefined,
      AT,
    );
    expect(calls.map((call) => [call.data.webhookId, call.data.recordType])).toEqual([[2, 'SubscriptionChange']]);
  });

  it('without the message’s summary, the call still goes, its message fields empty', () => {
    const [call] = decideCalls(delivered, [aWebhook(1, { delivery: true })], undefined, AT);
    expect(JSON.parse(call!.data.body)).toMatchObject({ Tag: '', Metadata: {}, MessageID: MESSAGE_ID });
  });

  it('a hard bounce reported by a DSN after the delivery calls the Bounce webhooks, like one in the conversation', () => {
    const lateBounce = {
      type: 'MessageHardBounced',
      data: {
        messageId: MESSAGE_ID,
        recipient: 'a@x.example',
        smtpResponse: 'smtp; 550 5.1.1 user unknown',
        statusCode: 550,
        summary: 'Bad destination mailbox address',
        reportId: 'report-1',
      },
      metadata: meta('event-4', undefined, AT + 60_000),
    };
    const webhooks = [aWebhook(1, { delivery: true }), aWebhook(2, { bounce: true })];
    const calls = decideCalls(lateBounce, webhooks, SUMMARY, AT + 60_000);
    expect(calls.map((call) => [call.data.webhookId, call.data.recordType])).toEqual([[2, 'Bounce']]);
    expect(JSON.parse(calls[0]!.data.body)).toMatchObject({ RecordType: 'Bounce', Type: 'HardBounce', Inactive: true });
  });

  it('a spam complaint calls the webhooks with SpamComplaint on, once per webhook, as a SpamComplaint', () => {
    const complaint = {
      type: 'MessageSpamComplaint',
      data: { messageId: MESSAGE_ID, recipient: 'a@x.example', feedbackType: 'abuse', summary: 'Spam', reportId: 'r' },
      metadata: meta('event-5'),
    };
    const webhooks = [aWebhook(1, { bounce: true }), aWebhook(2, { spamComplaint: true })];
    const calls = decideCalls(complaint, webhooks, SUMMARY, AT);
    expect(calls.map((call) => [call.data.webhookId, call.data.recordType])).toEqual([[2, 'SpamComplaint']]);
    expect(calls[0]!.data.callId).toBe(callIdOf('event-5', 2));
    expect(JSON.parse(calls[0]!.data.body)).toMatchObject({ RecordType: 'SpamComplaint', Type: 'SpamComplaint' });
  });

  it('an automatic reply and a delay notice call the Bounce webhooks', () => {
    const notice = (type: string, eventId: string) => ({
      type,
      data: { messageId: MESSAGE_ID, recipient: 'a@x.example', summary: 'Away', reportId: 'r' },
      metadata: meta(eventId),
    });
    const webhooks = [aWebhook(1, { bounce: true }), aWebhook(2, { spamComplaint: true })];
    const types = [notice('MessageAutoReplied', 'event-6'), notice('MessageDelayReported', 'event-7')].map((event) =>
      decideCalls(event, webhooks, SUMMARY, AT).map((call) => [call.data.webhookId, JSON.parse(call.data.body).Type]),
    );
    expect(types).toEqual([[[1, 'AutoResponder']], [[1, 'Transient']]]);
  });

  it('events that tell nothing to a webhook make no call', () => {
    const sent = { type: 'MessageSent', data: { messageId: MESSAGE_ID }, metadata: meta('event-3') };
    expect(decideCalls(sent, [aWebhook(1, { delivery: true, bounce: true })], SUMMARY, AT)).toEqual([]);
  });
});
