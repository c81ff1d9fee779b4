import type { ScheduleNextWebhookAttempt, SetAsideWebhookCall, WebhookCallScheduled } from '@sendline/domain';
import { attemptEventIdOf, type Decision } from '@sendline/infra';

/**
 * The process's webhook call commands: every call record is decided by the domain's webhook call decider and
 * appended through infra's CommandHandler (webhookCallCommands, infra/src/webhooks/calls.ts, which the API's manual
 * redelivery uses too): the dispatcher's first attempts (decide each, one commit for the batch), the next attempt of
 * a failed call, the calls set aside. The builders below give each command the record's name-based event id
 * (attemptEventIdOf), so a record decided again is the same record.
 */

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
