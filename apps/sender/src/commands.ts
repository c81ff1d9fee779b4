import {
  MESSAGE_EVENT_TYPES,
  messageDecider,
  suppressionDecider,
  type MessageCommand,
  type MessageEvent,
  type MessageState,
  type SuppressionCommand,
  type SuppressionEvent,
  type SuppressionState,
} from '@sendline/domain';
import { CommandHandler, type Decision, type EventAppender } from '@sendline/infra';
import type { DeliveryRetryScheduled } from './retryRecord';

/**
 * The sender's deciders, run through infra's CommandHandler: the message decider (MessageSent, each recipient's
 * outcome) and the suppression decider (the SuppressionAdded a hard bounce decides). The pipeline decides each
 * command with `decide` and appends a step's events with one `commit`: a batch's MessageSent events together,
 * then its outcomes, suppressions and retry records together (see pipeline.ts).
 */

/** What the sender appends: the message's events, the suppressions its hard bounces add, its retry records. */
export type SenderEvent = MessageEvent | SuppressionEvent | DeliveryRetryScheduled;

export interface SenderCommands {
  /** Decides the message's commands; commits every event the sender appends. */
  messages: CommandHandler<MessageState, MessageCommand, SenderEvent>;
  suppressions: CommandHandler<SuppressionState, SuppressionCommand, SuppressionEvent>;
}

export function senderCommands(store: EventAppender): SenderCommands {
  return {
    messages: new CommandHandler<MessageState, MessageCommand, SenderEvent>({ decider: messageDecider, store }),
    suppressions: new CommandHandler({ decider: suppressionDecider, store }),
  };
}

/**
 * The events a command decided. A broken rule is thrown, as the decider throws it: the sender's commands follow
 * from the message's own MessageAccepted, so a broken rule is a bug or a corrupt record, never an outcome.
 */
export function decided<Event>(decision: Decision<Event>): Event[] {
  if (!decision.ok) throw decision.error;
  return decision.events;
}

const MESSAGE_EVENTS: ReadonlySet<string> = new Set(MESSAGE_EVENT_TYPES);

export function isMessageEvent(event: SenderEvent): event is MessageEvent {
  return MESSAGE_EVENTS.has(event.type);
}
