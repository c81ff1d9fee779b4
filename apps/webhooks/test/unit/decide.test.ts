import { describe, expect, it } from 'vitest';
import type { MessageDelivered, SuppressionAdded } from '@sendline/domain';
import { callIdOf, decideCalls } from '../../src';
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

  it('events that tell nothing to a webhook make no call', () => {
    const sent = { type: 'MessageSent', data: { messageId: MESSAGE_ID }, metadata: meta('event-3') };
    expect(decideCalls(sent, [aWebhook(1, { delivery: true, bounce: true })], SUMMARY, AT)).toEqual([]);
  });
});
