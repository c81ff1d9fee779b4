import {
  messageDecider,
  suppressionDecider,
  suppressionForHardBounce,
  suppressionForSpamComplaint,
  type MessageEvent,
  type ReturnedOutcome,
  type SuppressionEvent,
} from '@sendline/domain';
import { nameBasedId, readReturnPathAddress, type ReturnedMessageState } from '@sendline/infra';

/**
 * From one received mail to what it means, decided by the domain (the message decider's RecordReturn, the
 * suppression decider): which message and recipient it is about, and the events to append. Pure but for the
 * token's HMAC; the reader (reader.ts) brings the parsed mail and the messages' states.
 *
 * 1. Which message: the signed token in the address the mail came to (`b.{token}@…`, the envelope recipient: what
 *    the remote server read from our MAIL FROM) — trusted, since only we can sign one; a token that does not verify
 *    matches nothing. Without any token, for a complaint only, the message id our header carries in the attached
 *    original (a feedback loop sends the report to its own registered address, and hides the recipient).
 * 2. Which recipient: the token's index among the message's active recipients; without a token, the recipient the
 *    report names among the message's own, or the message's only recipient.
 * 3. What it says of that recipient: the parser's reading (`outcomeOf`), one classifier for refusals.
 * 4. The events, with ids derived from what they record, so that the same mail read twice (a crash before the
 *    commit) appends the same events again, which every reader takes for one: a refusal and a complaint at most
 *    once per message and recipient, a notice once per received mail and recipient.
 */

export interface ReceivedMail {
  receivedId: string;
  /** The envelope recipients (RCPT TO) the mail came to. */
  envelopeTo: readonly string[];
  receivedAt: number;
}

/** What the parser read of the mail, as far as matching needs it. */
export interface ReadReport {
  /** A complaint's: the message id our header carries in the attached original, when the report attached one. */
  sendlineMessageId?: string;
  /** Addresses the report names as the recipient, lowercased. */
  namedRecipients: readonly string[];
  /** What the report says of `recipient`; undefined when it says nothing that changes anything (delivered). */
  outcomeOf(recipient: string, onlyRecipient: boolean): ReturnedOutcome | undefined | 'NotAbout';
  /** Why the mail could not be read as a report at all, if so. */
  unreadable?: string;
}

export type Unmatched =
  'Unreadable' | 'NoToken' | 'ForgedToken' | 'UnknownMessage' | 'UnknownRecipient' | 'NotAboutRecipient';

export type ReturnDecision =
  | {
      kind: 'Recorded';
      messageId: string;
      organizationId: string;
      recipient: string;
      events: (MessageEvent | SuppressionEvent)[];
      suppressions: SuppressionEvent[];
    }
  | { kind: 'NothingNew'; messageId: string; recipient: string }
  | { kind: 'Unmatched'; reason: Unmatched; detail: string };

const NAMESPACE = 'sendline returns';

/** The message a received mail is about, by its token or, failing that, by the header in its attachment. */
export function messageOf(
  key: Buffer,
  mail: ReceivedMail,
  report: Pick<ReadReport, 'sendlineMessageId'>,
): { messageId: string; recipientIndex?: number } | { unmatched: Unmatched; detail: string } {
  let forged: string | undefined;
  for (const address of mail.envelopeTo) {
    const reading = readReturnPathAddress(key, address);
    if (reading.ok) return { messageId: reading.messageId, recipientIndex: reading.recipientIndex };
    if (reading.reason !== 'NotAReturnPath') forged = `${address}: ${reading.reason}`;
  }
  // A token that does not verify is a forgery (or damage): nothing in the mail is trusted then.
  if (forged) return { unmatched: 'ForgedToken', detail: `no valid return-path token (${forged})` };
  if (report.sendlineMessageId) return { messageId: report.sendlineMessageId };
  return { unmatched: 'NoToken', detail: `no return-path token in ${mail.envelopeTo.join(', ') || 'no recipient'}` };
}

export function decideReturn(
  mail: ReceivedMail,
  report: ReadReport,
  target: { messageId: string; recipientIndex?: number },
  state: ReturnedMessageState | undefined,
): ReturnDecision {
  if (report.unreadable !== undefined) return { kind: 'Unmatched', reason: 'Unreadable', detail: report.unreadable };
  const { messageId } = target;
  if (!state) {
    return { kind: 'Unmatched', reason: 'UnknownMessage', detail: `message ${messageId} is not in the activity store` };
  }
  const recipients = [...state.recipients.keys()];
  let recipient: string | undefined;
  if (target.recipientIndex !== undefined) recipient = recipients[target.recipientIndex];
  else
    recipient =
      recipients.find((address) => report.namedRecipients.includes(address)) ??
      (recipients.length === 1 ? recipients[0] : undefined);
  if (recipient === undefined) {
    return {
      kind: 'Unmatched',
      reason: 'UnknownRecipient',
      detail: `the report names no recipient of message ${messageId} (${report.namedRecipients.join(', ') || 'none named'})`,
    };
  }
  const outcome = report.outcomeOf(recipient, recipients.length === 1 || target.recipientIndex !== undefined);
  if (outcome === 'NotAbout') {
    return {
      kind: 'Unmatched',
      reason: 'NotAboutRecipient',
      detail: `the report says nothing of ${recipient} (message ${messageId})`,
    };
  }
  if (outcome === undefined) return { kind: 'NothingNew', messageId, recipient };

  const organizationId = state.organizationId;
  const once = outcome.kind === 'AutoReplied' || outcome.kind === 'DelayReported' ? mail.receivedId : 'once';
  const metadata = (what: string) => ({
    organizationId,
    now: mail.receivedAt,
    eventIds: [nameBasedId(NAMESPACE, messageId, recipient, what, once)],
  });
  const events: (MessageEvent | SuppressionEvent)[] = messageDecider.decide(
    {
      type: 'RecordReturn',
      data: { messageId, recipient, reportId: mail.receivedId, outcome },
      metadata: metadata(outcome.kind),
    },
    state,
  );
  const suppressions: SuppressionEvent[] = [];
  for (const event of [...events]) {
    const add =
      event.type === 'MessageHardBounced'
        ? suppressionForHardBounce(event)
        : event.type === 'MessageSpamComplaint'
          ? suppressionForSpamComplaint(event)
          : undefined;
    if (!add) continue;
    const added = suppressionDecider.decide(
      { type: 'AddSuppression', data: add, metadata: metadata(`SuppressionAdded ${add.reason}`) },
      suppressionDecider.initialState(),
    );
    suppressions.push(...added);
    events.push(...added);
  }
  if (events.length === 0) return { kind: 'NothingNew', messageId, recipient };
  return { kind: 'Recorded', messageId, organizationId, recipient, events, suppressions };
}
