import {
  webhookCallDecider,
  type RedeliverWebhookCall,
  type ScheduleNextWebhookAttempt,
  type SetAsideWebhookCall,
  type WebhookCallCommand,
  type WebhookCallScheduled,
  type WebhookCallState,
} from '@sendline/domain';
import { CommandHandler, type Decision, type EventAppender } from '@sendline/infra';
import { attemptEventIdOf } from './decide';

/**
 * Every call record goes through the domain's webhook call decider and infra's CommandHandler, as every other
 * writer's events: the dispatcher's first attempts (decide each, one commit for the batch), the next attempt of a
 * failed call, the calls set aside, the API's manual redeliveries. The builders below give each command the
 * record's name-based event id (decide.ts), so a record decided again is the same record.
 */
export type WebhookCallCommands = CommandHandler<WebhookCallState, WebhookCallCommand, WebhookCallScheduled>;

export function webhookCallCommands(store: EventAppender): WebhookCallCommands {
  return new CommandHandler({ decider: webhookCallDecider, store });
}

/** The events a command decided; the call commands break no rule, so a refusal is a bug and is thrown. */
export function decided(decision: Decision<WebhookCallScheduled>): WebhookCallScheduled[] {
  if (!decision.ok) throw decision.error;
  return decision.events;
}

function metadataOf(record: WebhookCallScheduled, now: number, eventId: string) {
  return { organizationId: record.metadata.organizationId, now, eventIds: [eventId] };
}

/** The attempt after `record`'s, due at `dueAt`. */
export function nextAttemptOf(record: WebhookCallScheduled, dueAt: number, now: number): ScheduleNextWebhookAttempt {
  const eventId = attemptEventIdOf(record.data.callId, record.data.attempt + 1);
  return {
    type: 'ScheduleNextWebhookAttempt',
    data: { failed: record.data, dueAt },
    metadata: metadataOf(record, now, eventId),
  };
}

/** `record` set aside at `now`, due at `dueAt` (the first retry's delay). */
export function setAsideOf(record: WebhookCallScheduled, dueAt: number, now: number): SetAsideWebhookCall {
  const eventId = attemptEventIdOf(record.data.callId, record.data.attempt, `set aside at ${now}`);
  return {
    type: 'SetAsideWebhookCall',
    data: { call: record.data, dueAt },
    metadata: metadataOf(record, now, eventId),
  };
}

/** A manual redelivery of a call: its first record again, due now, made once whatever happened before. */
export function manualRedelivery(first: WebhookCallScheduled, now: number): RedeliverWebhookCall {
  const eventId = attemptEventIdOf(first.data.callId, 1, `manual at ${now}`);
  return { type: 'RedeliverWebhookCall', data: { first: first.data }, metadata: metadataOf(first, now, eventId) };
}
