import { assertNever } from '../event';
import type { ReturnedOutcome } from '../messages/decide';
import { returnedOutcomeOf } from '../messages/outcome';
import type { ReturnedMail } from './types';
import { returnedMailVerdicts, type ReturnVerdict } from './verdicts';

/**
 * What a returned mail records for each recipient it speaks of: the message decider's `RecordReturn` outcome, or
 * nothing (`undefined`) when it changes nothing (a recipient reported delivered, relayed or expanded; feedback that
 * is not a complaint: `not-spam`, `other`, …).
 *
 * | verdict (verdicts.ts)   | outcome                                              |
 * |-------------------------|------------------------------------------------------|
 * | Bounced                 | HardBounced, SoftBounced or PolicyRejected           |
 * | Delayed                 | DelayReported                                        |
 * | SpamComplaint           | SpamComplaint (its Feedback-Type and User-Agent)     |
 * | NoChange AutomaticReply | AutoReplied                                          |
 * | anything else           | nothing                                              |
 */
export interface RecipientReturn {
  /** The address the report names, as written; absent when it names none. */
  recipient?: string;
  outcome: ReturnedOutcome | undefined;
}

export const SPAM_COMPLAINT_SUMMARY = 'Reported as spam';
export const AUTOMATIC_REPLY_SUMMARY = 'Automatic reply';

function outcomeOfVerdict(verdict: ReturnVerdict, mail: ReturnedMail): ReturnedOutcome | undefined {
  switch (verdict.kind) {
    case 'Bounced':
    case 'Delayed':
      return returnedOutcomeOf(verdict.classification);
    case 'SpamComplaint':
      return {
        kind: 'SpamComplaint',
        feedbackType: verdict.feedbackType,
        ...(mail.kind === 'Complaint' && mail.userAgent !== undefined && { userAgent: mail.userAgent }),
        summary: SPAM_COMPLAINT_SUMMARY,
      };
    case 'OtherFeedback':
      return undefined;
    case 'NoChange':
      return verdict.reason === 'AutomaticReply'
        ? { kind: 'AutoReplied', summary: AUTOMATIC_REPLY_SUMMARY }
        : undefined;
    default:
      return assertNever(verdict);
  }
}

export function returnedOutcomes(mail: ReturnedMail): RecipientReturn[] {
  return returnedMailVerdicts(mail).map((verdict) => ({
    ...(verdict.recipient !== undefined && { recipient: verdict.recipient }),
    outcome: outcomeOfVerdict(verdict, mail),
  }));
}

/** How much an outcome says, to pick one when a report about one recipient holds several readings. */
export function outcomeWeight(outcome: ReturnedOutcome | undefined): number {
  if (outcome === undefined) return 0;
  switch (outcome.kind) {
    case 'HardBounced':
    case 'SpamComplaint':
      return 5;
    case 'PolicyRejected':
      return 4;
    case 'SoftBounced':
      return 3;
    case 'DelayReported':
      return 2;
    case 'AutoReplied':
      return 1;
    default:
      return assertNever(outcome);
  }
}
