import { eventMetadata, type Decider } from '../decider';
import { assertNever, type Command } from '../event';
import {
  evolveWebhookCall,
  initialWebhookCallState,
  type WebhookCallEvent,
  type WebhookCallRecordType,
  type WebhookCallScheduled,
  type WebhookCallScheduledData,
  type WebhookCallState,
} from './webhookCall';

/**
 * The webhook call's commands and `decide`: which attempt comes next, on which topic, due when. The caller (the
 * webhooks app, the API's redelivery route) passes the time and the record's event id in the metadata: a name-based
 * id per (call, attempt[, choice]), so a record decided again after a crash is the same record.
 *
 *   ScheduleWebhookCall ──────► attempt 1, retry 0, due now
 *   ScheduleNextWebhookAttempt ► attempt n+1, retry n, due at the retry's delay
 *   SetAsideWebhookCall ──────► the same attempt, retry 1, due after the first retry's delay
 *   RedeliverWebhookCall ─────► attempt 1, retry 0, due now, manual
 */

/** The first attempt of a call: an event told to one webhook. */
export type ScheduleWebhookCall = Command<
  'ScheduleWebhookCall',
  { callId: string; webhookId: number; recordType: WebhookCallRecordType; sourceEventId: string; body: string }
>;
/** The attempt after a failed one, on the topic of its retry. */
export type ScheduleNextWebhookAttempt = Command<
  'ScheduleNextWebhookAttempt',
  { failed: WebhookCallScheduledData; dueAt: number }
>;
/** A call of a backed-up webhook, moved to the first retry's topic with its attempt unchanged. */
export type SetAsideWebhookCall = Command<'SetAsideWebhookCall', { call: WebhookCallScheduledData; dueAt: number }>;
/** A call made again, once, on request: its first record again, due now. */
export type RedeliverWebhookCall = Command<'RedeliverWebhookCall', { first: WebhookCallScheduledData }>;

export type WebhookCallCommand =
  ScheduleWebhookCall | ScheduleNextWebhookAttempt | SetAsideWebhookCall | RedeliverWebhookCall;

function scheduled(command: WebhookCallCommand, data: WebhookCallScheduledData): WebhookCallScheduled[] {
  return [{ type: 'WebhookCallScheduled', data, metadata: eventMetadata(command.metadata)() }];
}

export function decideWebhookCall(command: WebhookCallCommand, _state: WebhookCallState): WebhookCallEvent[] {
  const now = command.metadata.now;
  switch (command.type) {
    case 'ScheduleWebhookCall': {
      const { callId, webhookId, recordType, sourceEventId, body } = command.data;
      return scheduled(command, {
        callId,
        webhookId,
        recordType,
        sourceEventId,
        body,
        attempt: 1,
        retry: 0,
        firstScheduledAt: now,
        dueAt: now,
        manual: false,
      });
    }
    case 'ScheduleNextWebhookAttempt': {
      const attempt = command.data.failed.attempt + 1;
      return scheduled(command, { ...command.data.failed, attempt, retry: attempt - 1, dueAt: command.data.dueAt });
    }
    case 'SetAsideWebhookCall':
      return scheduled(command, { ...command.data.call, retry: 1, dueAt: command.data.dueAt });
    case 'RedeliverWebhookCall':
      return scheduled(command, { ...command.data.first, attempt: 1, retry: 0, dueAt: now, manual: true });
    default:
      return assertNever(command);
  }
}

export type WebhookCallDecider = Decider<WebhookCallState, WebhookCallCommand, WebhookCallEvent>;

export const webhookCallDecider: WebhookCallDecider = {
  initialState: initialWebhookCallState,
  decide: decideWebhookCall,
  evolve: evolveWebhookCall,
};
