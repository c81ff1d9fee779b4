import { assertNever, type DomainEvent } from '../event';

/**
 * One attempt of one webhook call (schemas/avro/WebhookCallScheduled.avsc). The webhooks app appends the first
 * attempt of every call before it commits the event the call tells of, the next attempt of a failed one (on the
 * topic of that retry) before it commits the failed one, a call set aside on the first retry's topic, and the API a
 * manual redelivery. So a call is never lost between two processes, and every attempt carries the call's stable id
 * (Webhook-Id) and the exact body.
 *
 * Each record stands alone: a command carries the record it follows, so the decider keeps no state (a call's
 * records are read by the caller, not folded from a stream).
 */

/**
 * Postmark's record types, one per kind of call (the body's RecordType); Inbound: an inbound message POSTed to the
 * organization's InboundHookUrl (webhookId INBOUND_HOOK_ID; its body is Postmark's inbound JSON, which has no RecordType).
 */
export const WEBHOOK_CALL_RECORD_TYPES = [
  'Delivery',
  'Bounce',
  'SpamComplaint',
  'SubscriptionChange',
  'Inbound',
] as const;
export type WebhookCallRecordType = (typeof WEBHOOK_CALL_RECORD_TYPES)[number];

export interface WebhookCallScheduledData {
  callId: string;
  webhookId: number;
  recordType: WebhookCallRecordType;
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
export type WebhookCallEvent = WebhookCallScheduled;
export const WEBHOOK_CALL_EVENT_TYPES = ['WebhookCallScheduled'] as const satisfies readonly WebhookCallEvent['type'][];

export function isWebhookCallScheduled(event: { type: string }): event is WebhookCallScheduled {
  return event.type === 'WebhookCallScheduled';
}

/** No state: every command names the record it follows (see above). */
export type WebhookCallState = null;

export function initialWebhookCallState(): WebhookCallState {
  return null;
}

export function evolveWebhookCall(state: WebhookCallState, event: WebhookCallEvent): WebhookCallState {
  switch (event.type) {
    case 'WebhookCallScheduled':
      return state;
    default:
      return assertNever(event.type);
  }
}
