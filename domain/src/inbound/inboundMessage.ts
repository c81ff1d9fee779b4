import { eventMetadata, type Decider } from '../decider';
import { DomainError } from '../domainError';
import { assertNever, type Command, type DomainEvent } from '../event';

/**
 * An inbound message: mail our MX took for an organization's inbound address, parsed into Postmark's inbound JSON
 * by the inbound reader (apps/inbound) and recorded here, then POSTed to the organization's InboundHookUrl as a
 * webhook call (recordType Inbound, the webhooks' durable calls). One stream per message (its messageId, derived
 * from the received mail and the organization, so recording it again after a crash is the same message).
 *
 *   (none) ──RecordInboundMessage──► Queued  (posted to the hook)
 *                                  └► Blocked (an inbound rule matched its sender: recorded, not posted)
 *   Blocked ──BypassInboundMessage──► Bypassed (posted as if no rule had matched)
 *
 * Processed, Scheduled and Failed (Postmark's other statuses) are the hook call's outcome, read from the webhooks'
 * delivery log, not events of the message.
 */

export const INBOUND_MESSAGE_STATUSES = ['Queued', 'Blocked'] as const;
export type InboundMessageStatus = (typeof INBOUND_MESSAGE_STATUSES)[number];

/** The webhook id of an organization's inbound hook in the webhook calls and their delivery log (Postmark's ids start at 1). */
export const INBOUND_HOOK_ID = 0;

export interface InboundMessageData {
  messageId: string;
  /** The MailReceived it came in (the MX's receivedId). */
  receivedId: string;
  status: InboundMessageStatus;
  /** Why it was blocked ('' unless Blocked): the rule that matched. */
  blockedReason: string;
  /** The sender (the From header's address, else the envelope sender) and its display name. */
  from: string;
  fromName: string;
  /** To and Cc as Postmark shows them (`"Name" <address>, …`). */
  to: string;
  cc: string;
  subject: string;
  mailboxHash: string;
  tag: string;
  /** The inbound address it was sent to (the envelope recipient). */
  originalRecipient: string;
  /** When the MX took it, epoch ms. */
  receivedAt: number;
  /** The message's size as received, octets. */
  sizeBytes: number;
  /** Postmark's inbound JSON, as it is (or would be) POSTed: what the details show and the hook receives. */
  payload: string;
}

export type InboundMessageReceived = DomainEvent<'InboundMessageReceived', InboundMessageData>;
/** A blocked message let through on request: it is posted now. */
export type InboundMessageBypassed = DomainEvent<'InboundMessageBypassed', { messageId: string }>;
export type InboundMessageEvent = InboundMessageReceived | InboundMessageBypassed;
export const INBOUND_MESSAGE_EVENT_TYPES = [
  'InboundMessageReceived',
  'InboundMessageBypassed',
] as const satisfies readonly InboundMessageEvent['type'][];

export type RecordInboundMessage = Command<'RecordInboundMessage', InboundMessageData>;
export type BypassInboundMessage = Command<'BypassInboundMessage', { messageId: string }>;
export type InboundMessageCommand = RecordInboundMessage | BypassInboundMessage;

export type InboundMessageState = { status: 'None' } | { status: InboundMessageStatus | 'Bypassed'; messageId: string };

export function initialInboundMessageState(): InboundMessageState {
  return { status: 'None' };
}

export function evolveInboundMessage(state: InboundMessageState, event: InboundMessageEvent): InboundMessageState {
  switch (event.type) {
    case 'InboundMessageReceived':
      return { status: event.data.status, messageId: event.data.messageId };
    case 'InboundMessageBypassed':
      return { status: 'Bypassed', messageId: event.data.messageId };
    default:
      return assertNever(event);
  }
}

export function decideInboundMessage(
  command: InboundMessageCommand,
  state: InboundMessageState,
): InboundMessageEvent[] {
  switch (command.type) {
    case 'RecordInboundMessage':
      // Recorded once: the same mail read again after a crash decides nothing new.
      if (state.status !== 'None') return [];
      return [
        { type: 'InboundMessageReceived', data: { ...command.data }, metadata: eventMetadata(command.metadata)() },
      ];
    case 'BypassInboundMessage':
      if (state.status !== 'Blocked') {
        throw new DomainError(
          'InboundMessageNotBlocked',
          `Inbound message ${command.data.messageId} is not blocked: only a blocked message can bypass the rules.`,
          { messageId: command.data.messageId },
        );
      }
      return [
        {
          type: 'InboundMessageBypassed',
          data: { messageId: command.data.messageId },
          metadata: eventMetadata(command.metadata)(),
        },
      ];
    default:
      return assertNever(command);
  }
}

export const inboundMessageDecider: Decider<InboundMessageState, InboundMessageCommand, InboundMessageEvent> = {
  initialState: initialInboundMessageState,
  decide: decideInboundMessage,
  evolve: evolveInboundMessage,
};
