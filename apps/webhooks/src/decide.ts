import {
  BOUNCE_EVENT_TYPES,
  webhookCallDecider,
  type DomainEvent,
  type MessageSpamComplaint,
  type ScheduleWebhookCall,
  type WebhookCallScheduled,
  type WebhookConfig,
} from '@sendline/domain';
import { attemptEventIdOf, callIdOf } from '@sendline/infra';
import {
  bouncePayload,
  deliveryPayload,
  spamComplaintPayload,
  subscriptionChangePayload,
  UNKNOWN_SUMMARY,
  type BounceWebhookEvent,
  type MessageSummary,
} from './payloads';

/**
 * The events the dispatcher turns into calls; every other event is passed over. The bounces are the domain's
 * (BOUNCE_EVENT_TYPES): a refusal during the SMTP conversation or in a DSN after it, a DSN's delay notice, an
 * automatic reply (each a Bounce call), a spam complaint (a SpamComplaint call).
 */
export const DISPATCHED_EVENT_TYPES = [
  'MessageDelivered',
  ...BOUNCE_EVENT_TYPES,
  'SuppressionAdded',
  'SuppressionDeleted',
] as const;

/** Whether the event is about a message (and needs the message's summary to be told). */
export function messageIdOf(event: DomainEvent<string, unknown>): string | undefined {
  if (!event.type.startsWith('Message')) return undefined;
  const id = (event.data as { messageId?: unknown }).messageId;
  return typeof id === 'string' ? id : undefined;
}

/**
 * The calls an event makes: one ScheduleWebhookCall per webhook of the event's organization whose trigger is on (and
 * whose stream is the message's), each the event's Postmark body with a stable call id and its first record's
 * name-based event id. Pure: the caller read the webhooks and the message's summary; `now` is when the calls are
 * first due. The domain's webhook call decider turns each into its first attempt's record (decideCalls).
 */
export function scheduleCallsOf(
  event: DomainEvent<string, unknown>,
  webhooks: readonly WebhookConfig[],
  summary: MessageSummary | undefined,
  now: number,
): ScheduleWebhookCall[] {
  const organizationId = event.metadata.organizationId;
  const own = webhooks.filter((webhook) => webhook.organizationId === organizationId && webhook.enabled);
  if (own.length === 0) return [];
  const known = summary ?? UNKNOWN_SUMMARY;
  let body: object;
  let recordType: WebhookCallScheduled['data']['recordType'];
  let wants: (webhook: WebhookConfig) => boolean;
  switch (event.type) {
    case 'MessageDelivered':
      body = deliveryPayload(event as never, known);
      recordType = 'Delivery';
      wants = (webhook) => webhook.triggers.delivery.enabled;
      break;
    case 'MessageHardBounced':
    case 'MessageSoftBounced':
    case 'MessagePolicyRejected':
    case 'MessageDelayReported':
    case 'MessageAutoReplied':
      body = bouncePayload(event as BounceWebhookEvent, known);
      recordType = 'Bounce';
      wants = (webhook) => webhook.triggers.bounce.enabled;
      break;
    case 'MessageSpamComplaint':
      body = spamComplaintPayload(event as MessageSpamComplaint, known);
      recordType = 'SpamComplaint';
      wants = (webhook) => webhook.triggers.spamComplaint.enabled;
      break;
    case 'SuppressionAdded':
    case 'SuppressionDeleted':
      body = subscriptionChangePayload(event as never);
      recordType = 'SubscriptionChange';
      wants = (webhook) => webhook.triggers.subscriptionChange.enabled;
      break;
    default:
      return [];
  }
  const stream = (body as { MessageStream: string }).MessageStream;
  const json = JSON.stringify(body);
  return own
    .filter((webhook) => wants(webhook) && webhook.messageStream === stream)
    .map((webhook) => {
      const callId = callIdOf(event.metadata.eventId, webhook.webhookId);
      return {
        type: 'ScheduleWebhookCall',
        data: { callId, webhookId: webhook.webhookId, recordType, sourceEventId: event.metadata.eventId, body: json },
        metadata: { organizationId, now, eventIds: [attemptEventIdOf(callId, 1)] },
      };
    });
}

/** The first attempts' records of the calls an event makes (scheduleCallsOf, decided by the domain). */
export function decideCalls(
  event: DomainEvent<string, unknown>,
  webhooks: readonly WebhookConfig[],
  summary: MessageSummary | undefined,
  now: number,
): WebhookCallScheduled[] {
  return scheduleCallsOf(event, webhooks, summary, now).flatMap((command) =>
    webhookCallDecider.decide(command, webhookCallDecider.initialState()),
  );
}
