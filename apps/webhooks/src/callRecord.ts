import type { DomainEvent } from '@sendline/domain';
import type { WebhookRecordType } from './payloads';

/**
 * One attempt of one webhook call (schemas/avro/WebhookCallScheduled.avsc): the dispatcher appends the first
 * attempt of every call before it commits the event the call tells of; the caller appends the next attempt of a
 * failed one (on the topic of that retry) before it commits the failed one. So a call is never lost between two
 * processes, and every attempt carries the call's stable id (Webhook-Id) and the exact body.
 */
export interface WebhookCallScheduledData {
  callId: string;
  webhookId: number;
  recordType: WebhookRecordType;
  sourceEventId: string;
  body: string;
  attempt: number;
  /** The topic it waits on: 0 = webhooks.calls, n = webhooks.calls.retry-<n> (see the schema). */
  retry: number;
  firstScheduledAt: number;
  dueAt: number;
  manual: boolean;
}

export type WebhookCallScheduled = DomainEvent<'WebhookCallScheduled', WebhookCallScheduledData>;

export function isWebhookCallScheduled(event: { type: string }): event is WebhookCallScheduled {
  return event.type === 'WebhookCallScheduled';
}
