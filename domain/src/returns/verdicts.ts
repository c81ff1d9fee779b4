import { assertNever } from '../event';
import {
  classifyDeliveryAttempt,
  parseEnhancedStatus,
  type DeliveryAttempt,
  type DeliveryClassification,
} from '../messages/classification';
import { isComplaintFeedbackType } from './feedbackReport';
import { addressesInText, typedValue } from './fields';
import type { ReportedRecipient, ReturnedMail } from './types';

/**
 * What a returned message means for each recipient it speaks of. One classifier decides what a refusal means,
 * during the SMTP conversation or days later in a report (`classifyDeliveryAttempt`):
 *
 * | returned mail                            | verdict                                              | suppress?  |
 * |------------------------------------------|------------------------------------------------------|------------|
 * | report, `failed`, 5xx / 5.x.x            | Bounced: HardBounce, SoftBounce or PolicyRejection   | HardBounce |
 * | report, `failed`, 4xx / 4.x.x            | Bounced: SoftBounce, retriesExhausted (it gave up)   | no         |
 * | report, `delayed`                        | Delayed (Transient): a notice, it is still tried     | no         |
 * | report, `delivered` `relayed` `expanded` | NoChange                                             | no         |
 * | complaint, Feedback-Type abuse or fraud  | SpamComplaint                                        | yes        |
 * | complaint, any other type (not-spam, …)  | OtherFeedback                                        | no         |
 * | automatic reply                          | NoChange (AutomaticReply): the address exists        | no         |
 * | unrecognized                             | none                                                 |            |
 *
 * A report recipient's attempt: the basic code from its Diagnostic-Code (`smtp; 550 5.1.1 …`), else one standing for
 * its Status's class (554 for 5.x.x, 451 for 4.x.x; a `delayed` recipient is always of class 4); the enhanced code is
 * the Status unless that is a subject-0 code (`5.0.0`) and the Diagnostic-Code has a more specific one; the text is
 * the Diagnostic-Code's (so a refusal about spam or DMARC without a specific code reads as policy), else the Status.
 *
 * `recipient` is the address as we gave it when the report kept it (Original-Recipient), else the one it reports
 * (Final-Recipient, Original-Rcpt-To, the original's To, the automatic reply's From); absent when the report names
 * none (the consumer knows the recipient from the return-path token).
 */

export type BounceClassification = Extract<
  DeliveryClassification,
  { kind: 'HardBounce' | 'SoftBounce' | 'PolicyRejection' }
>;
export type DelayClassification = Extract<DeliveryClassification, { kind: 'Transient' }>;

export type ReturnVerdict =
  | {
      kind: 'Bounced';
      recipient?: string;
      classification: BounceClassification;
      /** The remote server gave up after retrying (a `failed` recipient with a 4xx / 4.x.x): a SoftBounce. */
      retriesExhausted: boolean;
      /** Only a HardBounce suppresses the address. */
      suppress: boolean;
    }
  | { kind: 'Delayed'; recipient?: string; classification: DelayClassification; suppress: false }
  | { kind: 'SpamComplaint'; recipient?: string; feedbackType: string; suppress: true }
  | { kind: 'OtherFeedback'; recipient?: string; feedbackType: string; suppress: false }
  | {
      kind: 'NoChange';
      recipient?: string;
      reason: 'Delivered' | 'Relayed' | 'Expanded' | 'AutomaticReply';
      suppress: false;
    };

const BASIC_CODE = /^([245])\d\d(?=[ -]|$)/;

/** The SMTP attempt a report's recipient stands for, to be classified like an answer during the conversation. */
export function deliveryAttemptOf(recipient: ReportedRecipient): DeliveryAttempt & { kind: 'response' } {
  const wantedClass = recipient.action === 'delayed' ? ['4'] : ['5', '4'];
  const text = recipient.diagnosticCode === undefined ? '' : typedValue(recipient.diagnosticCode).value;
  const basic = BASIC_CODE.exec(text);
  const statusClass = recipient.status?.[0];
  const defaultClass = statusClass !== undefined && wantedClass.includes(statusClass) ? statusClass : wantedClass[0];
  const code = basic && wantedClass.includes(basic[1]!) ? Number(basic[0]) : defaultClass === '4' ? 451 : 554;
  const status = recipient.status;
  const specific = status !== undefined && status.split('.')[1] !== '0' ? status : undefined;
  const enhancedStatus = specific ?? parseEnhancedStatus(text) ?? status;
  return {
    kind: 'response',
    code,
    text: text === '' ? (status ?? '') : text,
    ...(enhancedStatus !== undefined && { enhancedStatus }),
  };
}

function recipientOf(recipient: ReportedRecipient): string | undefined {
  return recipient.originalRecipient ?? recipient.finalRecipient;
}

/** The details of a classification, whatever its kind (a report's attempt always has a code and a text). */
function detailsOf(classification: DeliveryClassification, attempt: { code: number; text: string }) {
  return {
    smtpResponse: classification.smtpResponse ?? attempt.text,
    statusCode: classification.statusCode ?? attempt.code,
    ...(classification.enhancedStatus !== undefined && { enhancedStatus: classification.enhancedStatus }),
    summary: 'summary' in classification ? classification.summary : `SMTP reply ${attempt.code}`,
  };
}

function reportVerdict(reported: ReportedRecipient): ReturnVerdict {
  const recipient = recipientOf(reported);
  const at = recipient === undefined ? {} : { recipient };
  switch (reported.action) {
    case 'failed': {
      const attempt = deliveryAttemptOf(reported);
      const classification = classifyDeliveryAttempt(attempt);
      if (classification.kind === 'Delivered' || classification.kind === 'Transient') {
        // A 4xx the remote server gave up on (Delivered cannot come out: the attempt's code is 4xx or 5xx).
        return {
          kind: 'Bounced',
          ...at,
          classification: { kind: 'SoftBounce', ...detailsOf(classification, attempt) },
          retriesExhausted: true,
          suppress: false,
        };
      }
      return {
        kind: 'Bounced',
        ...at,
        classification,
        retriesExhausted: false,
        suppress: classification.kind === 'HardBounce',
      };
    }
    case 'delayed': {
      const attempt = deliveryAttemptOf(reported);
      const classification = classifyDeliveryAttempt(attempt);
      return {
        kind: 'Delayed',
        ...at,
        // The attempt of a delayed recipient is of class 4, which the classifier calls Transient.
        classification:
          classification.kind === 'Transient'
            ? classification
            : { kind: 'Transient', reason: 'response', ...detailsOf(classification, attempt) },
        suppress: false,
      };
    }
    case 'delivered':
      return { kind: 'NoChange', ...at, reason: 'Delivered', suppress: false };
    case 'relayed':
      return { kind: 'NoChange', ...at, reason: 'Relayed', suppress: false };
    case 'expanded':
      return { kind: 'NoChange', ...at, reason: 'Expanded', suppress: false };
    default:
      return assertNever(reported.action);
  }
}

/**
 * One verdict per recipient the returned mail speaks of: none for Unrecognized, one without a recipient for a
 * complaint that names none.
 */
export function returnedMailVerdicts(mail: ReturnedMail): ReturnVerdict[] {
  switch (mail.kind) {
    case 'DeliveryReport':
      return mail.recipients.map(reportVerdict);
    case 'Complaint': {
      const named = mail.originalRcptTo.length > 0 ? mail.originalRcptTo : addressesInText(mail.original.to ?? '');
      const verdict = (at: { recipient?: string }): ReturnVerdict =>
        isComplaintFeedbackType(mail.feedbackType)
          ? { kind: 'SpamComplaint', ...at, feedbackType: mail.feedbackType, suppress: true }
          : { kind: 'OtherFeedback', ...at, feedbackType: mail.feedbackType, suppress: false };
      return named.length > 0 ? uniqueSpellings(named).map((recipient) => verdict({ recipient })) : [verdict({})];
    }
    case 'AutoReply': {
      const recipient = addressesInText(mail.from ?? '')[0] ?? addressesInText(mail.original.to ?? '')[0];
      return [
        { kind: 'NoChange', ...(recipient !== undefined && { recipient }), reason: 'AutomaticReply', suppress: false },
      ];
    }
    case 'Unrecognized':
      return [];
    default:
      return assertNever(mail);
  }
}

/**
 * Every address a returned mail names as a recipient, lowercased, each once: the reported recipients' Final- and
 * Original-Recipient, a complaint's Original-Rcpt-To, the original message's To, an automatic reply's From. For
 * matching a report that came back without our return-path token; Unrecognized names none.
 */
export function addressesNamedBy(mail: ReturnedMail): string[] {
  switch (mail.kind) {
    case 'DeliveryReport':
      return unique([
        ...mail.recipients.flatMap((r) => [r.finalRecipient, r.originalRecipient].filter((a) => a !== undefined)),
        ...addressesInText(mail.original.to ?? ''),
      ]);
    case 'Complaint':
      return unique([...mail.originalRcptTo, ...addressesInText(mail.original.to ?? '')]);
    case 'AutoReply':
      return unique([...addressesInText(mail.from ?? ''), ...addressesInText(mail.original.to ?? '')]);
    case 'Unrecognized':
      return [];
    default:
      return assertNever(mail);
  }
}

/** Each address once (compared lowercased), as first written. */
function uniqueSpellings(addresses: readonly string[]): string[] {
  const seen = new Map<string, string>();
  for (const address of addresses) if (!seen.has(address.toLowerCase())) seen.set(address.toLowerCase(), address);
  return [...seen.values()];
}

function unique(addresses: readonly string[]): string[] {
  return [...new Set(addresses.map((address) => address.trim().toLowerCase()).filter((address) => address !== ''))];
}
