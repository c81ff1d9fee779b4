import { canRecipientMove, isConcluded, type MessageState, type RecipientState } from './message';

/**
 * Where a message's recipients stand, for a writer that does not read the message's stream. The sender decides
 * an attempt's outcomes on the message's state, but holds only the MessageAccepted (from email.messages, or
 * inside a retry record) and what it knows of each recipient: a retry record names the recipients still to try
 * and how many attempts failed; the sender's ledger, the outcomes an earlier run of the same attempt appended.
 * `resumeRecipients` moves those recipients to where they stand, so that the decider answers exactly as it
 * would on the stream (an outcome already recorded, or an attempt already deferred, decides nothing).
 *
 * Facts, as in `evolveMessage`: a recipient only moves along its transitions (a concluded one stays as it is),
 * its failed attempts never go down, and an address that is not an active recipient, or a message not yet Sent
 * (no recipient has an outcome before), is left as it is.
 */
export function resumeRecipients(state: MessageState, known: ReadonlyMap<string, RecipientState>): MessageState {
  if (state.phase !== 'Sent' || known.size === 0) return state;
  const recipients = new Map(state.recipients);
  for (const [address, standing] of known) {
    const current = recipients.get(address);
    if (!current) continue;
    if (isConcluded(current.status)) continue;
    if (standing.status !== current.status && !canRecipientMove(current.status, standing.status)) continue;
    recipients.set(address, {
      status: standing.status,
      failedAttempts: Math.max(current.failedAttempts, standing.failedAttempts),
    });
  }
  return { ...state, recipients };
}
