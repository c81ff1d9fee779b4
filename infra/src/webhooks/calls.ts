import type { DomainEvent } from '@sendline/domain';
import { nameBasedId } from '../ids';

/** What a call tells of (the `RecordType` of its body). */
export type WebhookRecordType = 'Delivery' | 'Bounce' | 'SpamComplaint' | 'SubscriptionChange';

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

/** Namespace of the name-based ids of calls (and of their records' event ids). */
const CALL_NAMESPACE = 'sendline.webhook-call';

/** The Webhook-Id of the call of `sourceEventId` to `webhookId`: the same whenever the event is decided again. */
export function callIdOf(sourceEventId: string, webhookId: number): string {
  return nameBasedId(CALL_NAMESPACE, sourceEventId, webhookId);
}

/**
 * The event id of a call's attempt record: one per (call, attempt), so a record appended twice reads as one. A
 * record appended by a choice made at a time (a manual redelivery, a call set aside) adds that choice.
 */
export function attemptEventIdOf(callId: string, attempt: number, choice?: string): string {
  return choice === undefined
    ? nameBasedId(CALL_NAMESPACE, callId, attempt)
    : nameBasedId(CALL_NAMESPACE, callId, attempt, choice);
}
