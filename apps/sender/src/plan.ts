import {
  canonicalAddress,
  evolveMessage,
  initialMessageState,
  isConcluded,
  resumeRecipients,
  type MessageAccepted,
  type MessageEvent,
  type MessageState,
  type RecipientState,
} from '@sendline/domain';
import { decided, isMessageEvent, type SenderCommands } from './commands';
import { eventIdFor } from './ids';
import type { MessageLedger } from './ledger';

/**
 * Step 1 of a delivery attempt (see pipeline.ts): what to do for each recipient of one message. Pure: the
 * ledger was read before, the clock and the jitter come in.
 *
 * Where a recipient stands is the domain's message state (its RecipientState): built from the MessageAccepted,
 * then moved to what the sender knows without reading the message's stream (domain `resumeRecipients`): a retry
 * record's recipients each failed `attempt - 1` times; the ledger's recorded outcomes (an earlier run of this
 * attempt appended them). The ledger's guard answers the one thing the state cannot: did a server already say
 * 250 for this recipient (then its Delivered comes from the guard, without a send), or was the failure unknown
 * (held: never sent again on its own).
 */

export interface DeliveryJob {
  accepted: MessageAccepted;
  /** The MessageAccepted event's Kafka value, carried into the retry record. */
  acceptedValue: Buffer;
  /** This attempt's number: 1 for the first. */
  attempt: number;
  /** When the first attempt was made; absent on the first attempt (it is now). */
  firstAttemptAt?: number;
  /** The recipients to try (a retry: the deferred ones); absent: every active recipient. */
  recipients?: readonly string[];
  /**
   * Where the MessageAccepted was read (`<topic>:<partition>:<offset>`), for a first attempt: the first copy
   * of a message read claims it in the ledger, and any other copy (a keyed send retried, appending the same
   * MessageAccepted again) is skipped whole.
   */
  source?: string;
}

/** A recipient a server already accepted (the ledger's guard): its Delivered is decided from the guard's answer. */
export interface GuardedRecipient {
  recipient: string;
  response: string;
  host: string;
  /** When the guard was applied (Redis's clock). */
  at: number;
  /** The envelope sender it was sent with; absent in a guard written before it was recorded. */
  returnPath?: string;
}

export interface Plan {
  readonly job: DeliveryJob;
  readonly messageId: string;
  readonly organizationId: string;
  /** Where the message and its recipients stand before this attempt's outcomes. */
  readonly state: MessageState;
  readonly firstAttemptAt: number;
  /** The retry jitter's random fraction, one per message and attempt. */
  readonly random: number;
  /** MessageSent to append before anything leaves; empty on a retry or when an earlier run appended it. */
  readonly sent: readonly MessageEvent[];
  readonly toSend: readonly string[];
  readonly fromGuard: readonly GuardedRecipient[];
  /** Recipients whose failure was unknown (the ledger's `held`): not sent, the run fails. */
  readonly held: readonly string[];
  /** Recipients concluded already, or whose attempt was made already. */
  readonly skipped: number;
}

/** A MessageAccepted's plan for this attempt, from its ledger (absent: nothing was done yet). */
export function planDelivery(
  job: DeliveryJob,
  ledger: MessageLedger | undefined,
  context: { commands: SenderCommands; now: number; random: number },
): Plan {
  const accepted = job.accepted;
  const { messageId } = accepted.data;
  const organizationId = accepted.metadata.organizationId;
  const acceptedState = evolveMessage(initialMessageState(), accepted);
  const sentEvents = decided(
    context.commands.messages.decide(
      {
        type: 'RecordSent',
        data: { messageId },
        metadata: { organizationId, now: context.now, eventIds: [eventIdFor(messageId, 'sent')] },
      },
      acceptedState,
    ),
  ).filter(isMessageEvent);
  const candidates = (job.recipients ?? accepted.data.activeRecipients).map(canonicalAddress);
  const state = resumeRecipients(
    sentEvents.reduce(evolveMessage, acceptedState),
    knownRecipients(job, candidates, ledger),
  );

  const toSend: string[] = [];
  const fromGuard: GuardedRecipient[] = [];
  const held: string[] = [];
  let skipped = 0;
  for (const recipient of candidates) {
    const entry = ledger?.recipients.get(recipient);
    const standing = state.phase === 'Initial' ? undefined : state.recipients.get(recipient);
    if (entry?.state === 'accepted') {
      fromGuard.push({
        recipient,
        response: entry.response,
        host: entry.host,
        at: entry.at,
        ...(entry.returnPath !== undefined && { returnPath: entry.returnPath }),
      });
    } else if (entry?.state === 'held') {
      held.push(recipient);
    } else if (standing && (isConcluded(standing.status) || standing.failedAttempts >= job.attempt)) {
      skipped++; // concluded, or this attempt's outcome is recorded already
    } else {
      toSend.push(recipient);
    }
  }
  return {
    job,
    messageId,
    organizationId,
    state,
    firstAttemptAt: job.firstAttemptAt ?? context.now,
    random: context.random,
    sent: job.attempt === 1 && !ledger?.sent ? sentEvents : [],
    toSend,
    fromGuard,
    held,
    skipped,
  };
}

/**
 * Where the sender knows its recipients stand, in the domain's terms: a retry's recipients failed `attempt - 1`
 * times (the retry record says so); a recipient whose outcome an earlier run appended stands where it left it.
 */
function knownRecipients(
  job: DeliveryJob,
  candidates: readonly string[],
  ledger: MessageLedger | undefined,
): Map<string, RecipientState> {
  const known = new Map<string, RecipientState>();
  if (job.attempt > 1) {
    for (const recipient of candidates) known.set(recipient, { status: 'Deferred', failedAttempts: job.attempt - 1 });
  }
  for (const [recipient, entry] of ledger?.recipients ?? []) {
    const failedAttempts = known.get(recipient)?.failedAttempts ?? 0;
    if (entry.state === 'deferred') {
      known.set(recipient, { status: 'Deferred', failedAttempts: Math.max(failedAttempts, entry.attempt) });
    } else if (entry.state === 'done') {
      known.set(recipient, { status: entry.outcome, failedAttempts });
    }
  }
  return known;
}
