import type { DomainEvent } from '../event';
import type { OutboundMessage } from '../validation';

/**
 * The message aggregate: its events, its state and `evolve`. One stream per message (key: message id).
 *
 * Lifecycle (see MESSAGE_TRANSITIONS and RECIPIENT_TRANSITIONS):
 *
 *   (none) ──AcceptMessage──► Accepted ──RecordSent──► Sent
 *
 * and, once Sent, per active recipient:
 *
 *   Queued ──► Deferred ⟲ (each retry that fails again)
 *     │           │
 *     └─────┬─────┘
 *           ▼
 *   Delivered | HardBounced | SoftBounced | PolicyRejected   (the delivery is concluded)
 *       │
 *       └──► HardBounced | SoftBounced | PolicyRejected   (a report that came back after the 250: a DSN)
 *
 * A spam complaint, an automatic reply or a delay notice that comes back is recorded for its recipient
 * (MessageSpamComplaint, MessageAutoReplied, MessageDelayReported) without moving it; a recipient complains once.
 *
 * Recipients are identified by their canonical (lowercased) address.
 */

// ── Events ──────────────────────────────────────────────────────────────────

export interface MessageAcceptedData extends OutboundMessage {
  messageId: string;
  /** Canonical (lowercased) addresses that will be delivered to: To + Cc + Bcc, duplicates merged, in order. */
  activeRecipients: string[];
  /** Canonical addresses left out because the organization suppresses them. */
  suppressedRecipients: string[];
  /** Epoch milliseconds; the send result's SubmittedAt. */
  submittedAt: number;
}

export interface MessageSentData {
  messageId: string;
}

/**
 * What every outcome of a recipient's delivery records: the message, the recipient, and the envelope sender
 * (MAIL FROM, `b.<token>@<return path>`) the attempt was made with, which is the Return-Path the recipient's server
 * stamped and where its later bounce or complaint goes. returnPath is absent on events recorded before it was, and
 * on a Delivered recorded from a guard written before it was.
 */
export interface RecipientOutcomeData {
  messageId: string;
  recipient: string;
  returnPath?: string;
}

export interface MessageDeliveredData extends RecipientOutcomeData {
  /** The receiving server's answer to the end of DATA, e.g. "250 2.0.0 OK queued as 1234". */
  smtpResponse: string;
  /** The host name of the server that took the message. */
  destinationServer: string;
}

/** A permanent refusal: shared by hard bounces and policy rejections. */
export interface MessageRefusalData extends RecipientOutcomeData {
  smtpResponse: string;
  /** The basic SMTP reply code, e.g. 550. */
  statusCode: number;
  /** The RFC 3463 enhanced status code when the server gave one, e.g. "5.1.1". */
  enhancedStatus?: string;
  /** A short human description, e.g. "Bad destination mailbox address". */
  summary: string;
  /** The received mail (MailReceived's receivedId) that reported it, for a refusal reported after the 250 (a DSN). */
  reportId?: string;
}

/** Why a recipient's delivery attempt did not conclude: a 4xx answer, a timeout or a connection failure. */
export type TransientReason = 'response' | 'timeout' | 'connection';

export interface MessageDeferredData extends RecipientOutcomeData {
  reason: TransientReason;
  /** The server's answer, when there was one (reason 'response'). */
  smtpResponse?: string;
  /** A short human description ("Mailbox temporarily unavailable", "Connection timed out", …). */
  summary: string;
  /** How many attempts have failed so far, 1 after the first. */
  attempt: number;
  /** Epoch milliseconds of the next attempt. */
  nextAttemptAt: number;
}

/**
 * Why a recipient soft-bounced: retries ran out (72 h of 4xx / timeouts), or a 5xx answer that is
 * neither a bad address nor a policy refusal (mailbox full, message too large, …): final for this message,
 * but no reason to suppress the address.
 */
export type SoftBounceReason = 'RetriesExhausted' | 'PermanentFailure';

export interface MessageSoftBouncedData extends RecipientOutcomeData {
  reason: SoftBounceReason;
  /** The last answer, when the last attempt got one. */
  smtpResponse?: string;
  summary: string;
  /** Attempts made in all. */
  attempts: number;
  /** The received mail that reported it, for a bounce reported after the 250 (a DSN). */
  reportId?: string;
}

/** A recipient's mailbox provider reported the message as spam (an ARF report from a feedback loop). */
export interface MessageSpamComplaintData {
  messageId: string;
  recipient: string;
  /** The report's Feedback-Type (RFC 5965), e.g. "abuse". */
  feedbackType: string;
  /** The reporting software (the report's User-Agent), when it gave one. */
  userAgent?: string;
  summary: string;
  /** The received mail (MailReceived's receivedId) that carried the report. */
  reportId: string;
}

/** Mail that came back and concludes nothing: an automatic reply (RFC 3834), or a DSN saying delivery is delayed. */
export interface MessageReturnNoticeData {
  messageId: string;
  recipient: string;
  summary: string;
  /** The status and diagnostic the notice gave, when it gave them ("4.4.7", "smtp; 451 …"). */
  enhancedStatus?: string;
  smtpResponse?: string;
  /** The received mail that carried it. */
  reportId: string;
}

export type MessageAccepted = DomainEvent<'MessageAccepted', MessageAcceptedData>;
export type MessageSent = DomainEvent<'MessageSent', MessageSentData>;
export type MessageDelivered = DomainEvent<'MessageDelivered', MessageDeliveredData>;
export type MessageHardBounced = DomainEvent<'MessageHardBounced', MessageRefusalData>;
export type MessagePolicyRejected = DomainEvent<'MessagePolicyRejected', MessageRefusalData>;
export type MessageDeferred = DomainEvent<'MessageDeferred', MessageDeferredData>;
export type MessageSoftBounced = DomainEvent<'MessageSoftBounced', MessageSoftBouncedData>;
export type MessageSpamComplaint = DomainEvent<'MessageSpamComplaint', MessageSpamComplaintData>;
export type MessageAutoReplied = DomainEvent<'MessageAutoReplied', MessageReturnNoticeData>;
export type MessageDelayReported = DomainEvent<'MessageDelayReported', MessageReturnNoticeData>;

/** An outcome of one recipient's delivery. */
export type RecipientOutcomeEvent =
  MessageDelivered | MessageHardBounced | MessagePolicyRejected | MessageDeferred | MessageSoftBounced;

/** What came back about a recipient and does not move it (see the lifecycle above). */
export type ReturnNoticeEvent = MessageSpamComplaint | MessageAutoReplied | MessageDelayReported;

export type MessageEvent = MessageAccepted | MessageSent | RecipientOutcomeEvent | ReturnNoticeEvent;

export const MESSAGE_EVENT_TYPES = [
  'MessageAccepted',
  'MessageSent',
  'MessageDelivered',
  'MessageHardBounced',
  'MessageSoftBounced',
  'MessagePolicyRejected',
  'MessageDeferred',
  'MessageSpamComplaint',
  'MessageAutoReplied',
  'MessageDelayReported',
] as const satisfies readonly MessageEvent['type'][];

// ── State and transitions ───────────────────────────────────────────────────

export type MessagePhase = 'Initial' | 'Accepted' | 'Sent';

export type RecipientStatus = 'Queued' | 'Deferred' | 'Delivered' | 'HardBounced' | 'SoftBounced' | 'PolicyRejected';

/** The message's lifecycle: which phase may follow which (kafkajs transactionStateMachine style). */
export const MESSAGE_TRANSITIONS: Readonly<Record<MessagePhase, readonly MessagePhase[]>> = {
  Initial: ['Accepted'],
  Accepted: ['Sent'],
  Sent: [],
};

/** A recipient's delivery: which status may follow which. A status with no successor is terminal. */
export const RECIPIENT_TRANSITIONS: Readonly<Record<RecipientStatus, readonly RecipientStatus[]>> = {
  Queued: ['Deferred', 'Delivered', 'HardBounced', 'SoftBounced', 'PolicyRejected'],
  Deferred: ['Deferred', 'Delivered', 'HardBounced', 'SoftBounced', 'PolicyRejected'],
  // A DSN may report, after the receiving server's 250, that the message was not delivered after all.
  Delivered: ['HardBounced', 'SoftBounced', 'PolicyRejected'],
  HardBounced: [],
  SoftBounced: [],
  PolicyRejected: [],
};

export function canMessageMove(from: MessagePhase, to: MessagePhase): boolean {
  return MESSAGE_TRANSITIONS[from].includes(to);
}

export function canRecipientMove(from: RecipientStatus, to: RecipientStatus): boolean {
  return RECIPIENT_TRANSITIONS[from].includes(to);
}

export function isTerminal(status: RecipientStatus): boolean {
  return RECIPIENT_TRANSITIONS[status].length === 0;
}

/**
 * Whether the recipient's delivery is over: its server answered for good (Delivered or a refusal), or retries ran
 * out. Only a report that comes back later (a DSN) moves a concluded recipient; the sender never does.
 */
export function isConcluded(status: RecipientStatus): boolean {
  return status !== 'Queued' && status !== 'Deferred';
}

export interface RecipientState {
  status: RecipientStatus;
  /** Failed attempts recorded so far (the last MessageDeferred's attempt number; 0 before any). */
  failedAttempts: number;
  /** Whether the recipient's provider reported the message as spam (MessageSpamComplaint). */
  complained?: boolean;
}

export type MessageState =
  | { phase: 'Initial' }
  | {
      phase: 'Accepted' | 'Sent';
      messageId: string;
      organizationId: string;
      /** Keyed by canonical address; suppressed recipients are not here. */
      recipients: ReadonlyMap<string, RecipientState>;
      suppressedRecipients: readonly string[];
    };

export function initialMessageState(): MessageState {
  return { phase: 'Initial' };
}

const OUTCOME_STATUS: Record<RecipientOutcomeEvent['type'], RecipientStatus> = {
  MessageDelivered: 'Delivered',
  MessageHardBounced: 'HardBounced',
  MessagePolicyRejected: 'PolicyRejected',
  MessageDeferred: 'Deferred',
  MessageSoftBounced: 'SoftBounced',
};

/** The status a recipient takes when this outcome event is applied. */
export function recipientStatusAfter(event: RecipientOutcomeEvent): RecipientStatus {
  return OUTCOME_STATUS[event.type];
}

/**
 * Events are facts: `evolve` applies what it can and leaves the state as it is for an event that does not
 * fit (a duplicate, or one out of order), so replaying a stream never fails.
 */
export function evolveMessage(state: MessageState, event: MessageEvent): MessageState {
  switch (event.type) {
    case 'MessageAccepted': {
      if (state.phase !== 'Initial') return state;
      const recipients = new Map<string, RecipientState>();
      for (const address of event.data.activeRecipients)
        recipients.set(address, { status: 'Queued', failedAttempts: 0 });
      return {
        phase: 'Accepted',
        messageId: event.data.messageId,
        organizationId: event.metadata.organizationId,
        recipients,
        suppressedRecipients: event.data.suppressedRecipients,
      };
    }
    case 'MessageSent':
      return state.phase === 'Accepted' ? { ...state, phase: 'Sent' } : state;
    case 'MessageDelivered':
    case 'MessageHardBounced':
    case 'MessagePolicyRejected':
    case 'MessageDeferred':
    case 'MessageSoftBounced': {
      if (state.phase === 'Initial') return state;
      const current = state.recipients.get(event.data.recipient);
      const next = recipientStatusAfter(event);
      if (!current || !canRecipientMove(current.status, next)) return state;
      const recipients = new Map(state.recipients);
      recipients.set(event.data.recipient, {
        ...current,
        status: next,
        failedAttempts: event.type === 'MessageDeferred' ? event.data.attempt : current.failedAttempts,
      });
      return { ...state, recipients };
    }
    case 'MessageSpamComplaint': {
      if (state.phase === 'Initial') return state;
      const current = state.recipients.get(event.data.recipient);
      if (!current || current.complained) return state;
      const recipients = new Map(state.recipients);
      recipients.set(event.data.recipient, { ...current, complained: true });
      return { ...state, recipients };
    }
    case 'MessageAutoReplied':
    case 'MessageDelayReported':
      return state;
    default: {
      // Exhaustive at compile time; at run time an event type from a newer writer is skipped, not fatal.
      const _unknown: never = event;
      return state;
    }
  }
}

// ── The status shown when listing messages ─────────────────────────────────

export type MessageListingStatus =
  'Queued' | 'Sent' | 'Deferred' | 'Delivered' | 'PartiallyDelivered' | 'Bounced' | 'Rejected';

/**
 * The one status a message is listed under, derived from its phase and its recipients' statuses:
 *
 * 1. Accepted (not yet taken by the mail server) → Queued.
 * 2. Sent, and a recipient is still Queued (its first attempt has no outcome yet) → Sent.
 * 3. Sent, none Queued, some Deferred (waiting for a retry) → Deferred.
 * 4. Every recipient terminal:
 *    - all Delivered → Delivered;
 *    - some Delivered, others not → PartiallyDelivered;
 *    - none Delivered, some HardBounced or SoftBounced → Bounced;
 *    - none Delivered, all PolicyRejected → Rejected.
 *
 * The projector uses the same function so that the listing and the aggregate agree.
 */
export function deriveMessageStatus(
  phase: 'Accepted' | 'Sent',
  recipientStatuses: readonly RecipientStatus[],
): MessageListingStatus {
  if (phase === 'Accepted') return 'Queued';
  if (recipientStatuses.includes('Queued')) return 'Sent';
  if (recipientStatuses.includes('Deferred')) return 'Deferred';
  const delivered = recipientStatuses.filter((status) => status === 'Delivered').length;
  if (delivered > 0) return delivered === recipientStatuses.length ? 'Delivered' : 'PartiallyDelivered';
  if (recipientStatuses.some((status) => status === 'HardBounced' || status === 'SoftBounced')) return 'Bounced';
  return 'Rejected';
}

/** The listing status of an aggregate state; undefined before the message was accepted. */
export function messageListingStatus(state: MessageState): MessageListingStatus | undefined {
  if (state.phase === 'Initial') return undefined;
  return deriveMessageStatus(
    state.phase,
    [...state.recipients.values()].map((recipient) => recipient.status),
  );
}
