import { eventMetadata, type Decider } from '../decider';
import { DomainError } from '../domainError';
import { assertNever, type Command, type CommandMetadata } from '../event';
import { canonicalAddress, type OutboundMessage } from '../validation';
import {
  canMessageMove,
  canRecipientMove,
  evolveMessage,
  initialMessageState,
  isConcluded,
  type MessageAccepted,
  type MessageEvent,
  type MessageSent,
  type MessageState,
  type RecipientOutcomeEvent,
  type RecipientStatus,
  type ReturnNoticeEvent,
  type SoftBounceReason,
  type TransientReason,
} from './message';

/**
 * The message aggregate's commands and `decide`. Domain errors (codes):
 * - MessageAlreadyAccepted: AcceptMessage on a message that exists.
 * - AllRecipientsSuppressed: every recipient is suppressed (details.suppressed: the addresses).
 * - MessageNotAccepted: RecordSent or an outcome for a message never accepted.
 * - MessageNotSent: an outcome before the message was Sent.
 * - MessageIdMismatch / OrganizationMismatch: the command names another message or organization
 *   than the stream it was decided on.
 * - RecipientNotInMessage: an outcome for an address that is not an active recipient.
 * - MissingEventId: the command carried too few event ids (from idSupply).
 *
 * Idempotent no-ops ([]): RecordSent on a Sent message; an outcome for a recipient already concluded;
 * a Deferred whose attempt number was already recorded (at-least-once delivery re-runs handlers); a returned
 * refusal for a recipient that already bounced or was refused; a second spam complaint of one recipient.
 */

export interface AcceptMessageData {
  messageId: string;
  message: OutboundMessage;
  /** Canonical (lowercased) addresses the organization suppresses, among this message's recipients or more. */
  suppressedAddresses: ReadonlySet<string>;
}

export interface RecordSentData {
  messageId: string;
}

/** What happened to one recipient's delivery, as the sender observed it. */
export type DeliveryOutcome =
  | { kind: 'Delivered'; smtpResponse: string; destinationServer: string }
  | { kind: 'HardBounced'; smtpResponse: string; statusCode: number; enhancedStatus?: string; summary: string }
  | { kind: 'PolicyRejected'; smtpResponse: string; statusCode: number; enhancedStatus?: string; summary: string }
  | {
      kind: 'Deferred';
      reason: TransientReason;
      smtpResponse?: string;
      summary: string;
      attempt: number;
      nextAttemptAt: number;
    }
  | { kind: 'SoftBounced'; reason: SoftBounceReason; smtpResponse?: string; summary: string; attempts: number };

export interface RecordDeliveryOutcomeData {
  messageId: string;
  /** The recipient's address (matched case-insensitively). */
  recipient: string;
  outcome: DeliveryOutcome;
  /** The envelope sender (MAIL FROM) the attempt was made with: the recipient's Return-Path, recorded on the event. */
  returnPath?: string;
}

/**
 * What mail that came back said of one recipient, after the SMTP conversation: a DSN's refusal (classified by the
 * same classifier as a refusal during the conversation), a DSN's delay notice, a spam complaint (ARF), an
 * automatic reply.
 */
export type ReturnedOutcome =
  | {
      kind: 'HardBounced' | 'PolicyRejected';
      smtpResponse: string;
      statusCode: number;
      enhancedStatus?: string;
      summary: string;
    }
  | { kind: 'SoftBounced'; smtpResponse?: string; summary: string }
  | { kind: 'DelayReported'; smtpResponse?: string; enhancedStatus?: string; summary: string }
  | { kind: 'SpamComplaint'; feedbackType: string; userAgent?: string; summary: string }
  | { kind: 'AutoReplied'; summary: string };

export interface RecordReturnData {
  messageId: string;
  /** The recipient's address (matched case-insensitively). */
  recipient: string;
  /** The received mail that said it (MailReceived's receivedId). */
  reportId: string;
  outcome: ReturnedOutcome;
}

export type AcceptMessage = Command<'AcceptMessage', AcceptMessageData>;
export type RecordReturn = Command<'RecordReturn', RecordReturnData>;
export type RecordSent = Command<'RecordSent', RecordSentData>;
export type RecordDeliveryOutcome = Command<'RecordDeliveryOutcome', RecordDeliveryOutcomeData>;
export type MessageCommand = AcceptMessage | RecordSent | RecordDeliveryOutcome | RecordReturn;

/** To, Cc and Bcc in order, as canonical addresses, each once. */
export function uniqueRecipients(message: Pick<OutboundMessage, 'to' | 'cc' | 'bcc'>): string[] {
  const seen = new Set<string>();
  for (const mailbox of [...message.to, ...message.cc, ...message.bcc]) seen.add(canonicalAddress(mailbox.email));
  return [...seen];
}

function acceptMessage(command: AcceptMessage, state: MessageState): MessageAccepted[] {
  const { messageId, message, suppressedAddresses } = command.data;
  if (state.phase !== 'Initial' || !canMessageMove(state.phase, 'Accepted')) {
    throw new DomainError('MessageAlreadyAccepted', `message ${messageId} was already accepted`, { messageId });
  }
  const suppressed = new Set([...suppressedAddresses].map(canonicalAddress));
  const recipients = uniqueRecipients(message);
  const activeRecipients = recipients.filter((address) => !suppressed.has(address));
  const suppressedRecipients = recipients.filter((address) => suppressed.has(address));
  if (activeRecipients.length === 0) {
    throw new DomainError('AllRecipientsSuppressed', 'every recipient of the message is suppressed', {
      suppressed: suppressedRecipients,
    });
  }
  return [
    {
      type: 'MessageAccepted',
      data: {
        messageId,
        ...message,
        activeRecipients,
        suppressedRecipients,
        submittedAt: command.metadata.now,
      },
      metadata: eventMetadata(command.metadata)(),
    },
  ];
}

function assertSameStream(
  state: Exclude<MessageState, { phase: 'Initial' }>,
  messageId: string,
  metadata: CommandMetadata,
): void {
  if (state.messageId !== messageId) {
    throw new DomainError(
      'MessageIdMismatch',
      `the command is for message ${messageId}, the stream is ${state.messageId}`,
    );
  }
  if (state.organizationId !== metadata.organizationId) {
    throw new DomainError('OrganizationMismatch', `message ${messageId} belongs to another organization`);
  }
}

function recordSent(command: RecordSent, state: MessageState): MessageSent[] {
  const { messageId } = command.data;
  if (state.phase === 'Initial') {
    throw new DomainError('MessageNotAccepted', `message ${messageId} was never accepted`, { messageId });
  }
  assertSameStream(state, messageId, command.metadata);
  if (!canMessageMove(state.phase, 'Sent')) return []; // already Sent: a re-run of the same handler
  return [{ type: 'MessageSent', data: { messageId }, metadata: eventMetadata(command.metadata)() }];
}

const OUTCOME_STATUS: Record<DeliveryOutcome['kind'], RecipientStatus> = {
  Delivered: 'Delivered',
  HardBounced: 'HardBounced',
  PolicyRejected: 'PolicyRejected',
  Deferred: 'Deferred',
  SoftBounced: 'SoftBounced',
};

function recordDeliveryOutcome(command: RecordDeliveryOutcome, state: MessageState): RecipientOutcomeEvent[] {
  const { messageId, outcome } = command.data;
  const recipient = canonicalAddress(command.data.recipient);
  if (state.phase === 'Initial') {
    throw new DomainError('MessageNotAccepted', `message ${messageId} was never accepted`, { messageId });
  }
  assertSameStream(state, messageId, command.metadata);
  if (state.phase !== 'Sent') {
    throw new DomainError('MessageNotSent', `message ${messageId} has not been sent yet`, { messageId });
  }
  const current = state.recipients.get(recipient);
  if (!current) {
    const why = state.suppressedRecipients.includes(recipient) ? 'is a suppressed recipient' : 'is not a recipient';
    throw new DomainError('RecipientNotInMessage', `${recipient} ${why} of message ${messageId}`, {
      messageId,
      recipient,
    });
  }
  if (isConcluded(current.status)) return [];
  if (!canRecipientMove(current.status, OUTCOME_STATUS[outcome.kind])) return [];
  if (outcome.kind === 'Deferred' && outcome.attempt <= current.failedAttempts) return [];

  const metadata = eventMetadata(command.metadata)();
  const { returnPath } = command.data;
  const base = { messageId, recipient, ...(returnPath !== undefined && { returnPath }) };
  switch (outcome.kind) {
    case 'Delivered':
      return [
        {
          type: 'MessageDelivered',
          data: { ...base, smtpResponse: outcome.smtpResponse, destinationServer: outcome.destinationServer },
          metadata,
        },
      ];
    case 'HardBounced':
    case 'PolicyRejected': {
      const data = {
        ...base,
        smtpResponse: outcome.smtpResponse,
        statusCode: outcome.statusCode,
        ...(outcome.enhancedStatus !== undefined && { enhancedStatus: outcome.enhancedStatus }),
        summary: outcome.summary,
      };
      return outcome.kind === 'HardBounced'
        ? [{ type: 'MessageHardBounced', data, metadata }]
        : [{ type: 'MessagePolicyRejected', data, metadata }];
    }
    case 'Deferred':
      return [
        {
          type: 'MessageDeferred',
          data: {
            ...base,
            reason: outcome.reason,
            ...(outcome.smtpResponse !== undefined && { smtpResponse: outcome.smtpResponse }),
            summary: outcome.summary,
            attempt: outcome.attempt,
            nextAttemptAt: outcome.nextAttemptAt,
          },
          metadata,
        },
      ];
    case 'SoftBounced':
      return [
        {
          type: 'MessageSoftBounced',
          data: {
            ...base,
            reason: outcome.reason,
            ...(outcome.smtpResponse !== undefined && { smtpResponse: outcome.smtpResponse }),
            summary: outcome.summary,
            attempts: outcome.attempts,
          },
          metadata,
        },
      ];
    default:
      return assertNever(outcome);
  }
}

/**
 * Mail that came back about a recipient. A refusal moves the recipient (from Delivered too: the 250 was not the
 * end) unless it already bounced or was refused; a complaint is recorded once per recipient; an automatic reply or
 * a delay notice is recorded each time one comes, and moves nothing.
 */
function recordReturn(command: RecordReturn, state: MessageState): (RecipientOutcomeEvent | ReturnNoticeEvent)[] {
  const { messageId, outcome, reportId } = command.data;
  const recipient = canonicalAddress(command.data.recipient);
  if (state.phase === 'Initial') {
    throw new DomainError('MessageNotAccepted', `message ${messageId} was never accepted`, { messageId });
  }
  assertSameStream(state, messageId, command.metadata);
  const current = state.recipients.get(recipient);
  if (!current) {
    throw new DomainError('RecipientNotInMessage', `${recipient} is not a recipient of message ${messageId}`, {
      messageId,
      recipient,
    });
  }
  const metadata = eventMetadata(command.metadata)();
  const base = { messageId, recipient };
  switch (outcome.kind) {
    case 'HardBounced':
    case 'PolicyRejected': {
      if (!canRecipientMove(current.status, outcome.kind)) return [];
      const data = {
        ...base,
        smtpResponse: outcome.smtpResponse,
        statusCode: outcome.statusCode,
        ...(outcome.enhancedStatus !== undefined && { enhancedStatus: outcome.enhancedStatus }),
        summary: outcome.summary,
        reportId,
      };
      return outcome.kind === 'HardBounced'
        ? [{ type: 'MessageHardBounced', data, metadata }]
        : [{ type: 'MessagePolicyRejected', data, metadata }];
    }
    case 'SoftBounced':
      if (!canRecipientMove(current.status, 'SoftBounced')) return [];
      return [
        {
          type: 'MessageSoftBounced',
          data: {
            ...base,
            reason: 'PermanentFailure',
            ...(outcome.smtpResponse !== undefined && { smtpResponse: outcome.smtpResponse }),
            summary: outcome.summary,
            attempts: Math.max(1, current.failedAttempts),
            reportId,
          },
          metadata,
        },
      ];
    case 'SpamComplaint':
      if (current.complained) return [];
      return [
        {
          type: 'MessageSpamComplaint',
          data: {
            ...base,
            feedbackType: outcome.feedbackType,
            ...(outcome.userAgent !== undefined && { userAgent: outcome.userAgent }),
            summary: outcome.summary,
            reportId,
          },
          metadata,
        },
      ];
    case 'AutoReplied':
    case 'DelayReported': {
      const data = {
        ...base,
        summary: outcome.summary,
        ...(outcome.kind === 'DelayReported' &&
          outcome.enhancedStatus !== undefined && {
            enhancedStatus: outcome.enhancedStatus,
          }),
        ...(outcome.kind === 'DelayReported' &&
          outcome.smtpResponse !== undefined && {
            smtpResponse: outcome.smtpResponse,
          }),
        reportId,
      };
      return outcome.kind === 'AutoReplied'
        ? [{ type: 'MessageAutoReplied', data, metadata }]
        : [{ type: 'MessageDelayReported', data, metadata }];
    }
    default:
      return assertNever(outcome);
  }
}

export function decideMessage(command: MessageCommand, state: MessageState): MessageEvent[] {
  switch (command.type) {
    case 'AcceptMessage':
      return acceptMessage(command, state);
    case 'RecordSent':
      return recordSent(command, state);
    case 'RecordDeliveryOutcome':
      return recordDeliveryOutcome(command, state);
    case 'RecordReturn':
      return recordReturn(command, state);
    default:
      return assertNever(command);
  }
}

export type MessageDecider = Decider<MessageState, MessageCommand, MessageEvent>;

export const messageDecider: MessageDecider = {
  initialState: initialMessageState,
  decide: decideMessage,
  evolve: evolveMessage,
};
