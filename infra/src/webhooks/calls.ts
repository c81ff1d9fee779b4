import {
  webhookCallDecider,
  type WebhookCallCommand,
  type WebhookCallScheduled,
  type WebhookCallState,
} from '@sendline/domain';
import { CommandHandler, type EventAppender } from '../commands';
import { nameBasedId } from '../ids';

/**
 * A webhook call's record is the domain's WebhookCallScheduled (domain/src/webhookCalls/), decided by its commands.
 * What the webhooks process and the API's manual redelivery share of it is here: the name-based ids of a call and of
 * its records, and the CommandHandler every call record is appended through.
 */

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

/**
 * Every call record goes through the domain's webhook call decider and the CommandHandler, as every other writer's
 * events: the webhooks process's first attempts, next attempts and calls set aside, the API's manual redeliveries.
 * Each command carries its record's name-based event id (attemptEventIdOf), so a record decided again is the same
 * record.
 */
export type WebhookCallCommands = CommandHandler<WebhookCallState, WebhookCallCommand, WebhookCallScheduled>;

export function webhookCallCommands(store: EventAppender): WebhookCallCommands {
  return new CommandHandler({ decider: webhookCallDecider, store });
}
