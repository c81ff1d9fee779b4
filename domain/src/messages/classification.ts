import { assertNever } from '../event';
import type { TransientReason } from './message';

/**
 * SMTP delivery outcomes, classified. Pure: the sender's SMTP adapter turns what nodemailer reports
 * (responseCode, response) into a DeliveryAttempt and acts on the classification.
 *
 * | answer                                                              | classification  | suppress? |
 * |---------------------------------------------------------------------|-----------------|-----------|
 * | 2xx                                                                 | Delivered       | no        |
 * | 5xx with 5.1.x (bad mailbox / address / domain) except 5.1.7, 5.1.8 | HardBounce      | yes       |
 * | 5xx with 5.2.1 (mailbox disabled)                                   | HardBounce      | yes       |
 * | 5xx with 5.7.x (policy, reputation, authentication: 5.7.1, 5.7.26…) | PolicyRejection | no        |
 * | 5xx with 5.1.7 / 5.1.8 (our sender address refused)                 | PolicyRejection | no        |
 * | 5xx with 5.2.x other (5.2.2 mailbox full, 5.2.3 too large), 5.3.x,  | SoftBounce      | no        |
 * |   5.4.x, 5.5.x, 5.6.x                                               |                 |           |
 * | 5xx without a (specific) enhanced code, text about spam, blocking,  | PolicyRejection | no        |
 * |   policy, reputation, SPF / DKIM / DMARC or authentication          |                 |           |
 * | 550, 551, 553 without a (specific) enhanced code, other text        | HardBounce      | yes       |
 * | other 5xx without a (specific) enhanced code (552, 554, …)          | SoftBounce      | no        |
 * | 4xx, timeout, connection failure, anything else                     | Transient       | no        |
 *
 * SoftBounce is final for this message (a 5xx is permanent, RFC 5321 §4.2.1: retrying is pointless) but
 * is no evidence that the address is bad: mailbox full, message too large and the like are the
 * recipient's or the content's state, not the address's. Transient is retried with backoff (see
 * `nextRetry`) and soft-bounces once retries run out.
 *
 * The enhanced status code (RFC 3463) is taken from the attempt, or else parsed from the reply text
 * ("550 5.1.1 <x@y.com>: user unknown", "550-5.1.1 ..."). An enhanced code whose class disagrees with
 * the basic code's (a 5xx reply with "4.2.2") is ignored, as is a subject-0 code ("5.0.0": "other or
 * undefined"), which says nothing more than the basic code.
 */

export type DeliveryAttempt =
  | { kind: 'response'; code: number; enhancedStatus?: string; text: string }
  | { kind: 'timeout' }
  | { kind: 'connection'; text: string };

interface RefusalDetails {
  smtpResponse: string;
  statusCode: number;
  enhancedStatus?: string;
  summary: string;
}

export type DeliveryClassification =
  | { kind: 'Delivered'; smtpResponse: string; statusCode: number; enhancedStatus?: string }
  | ({ kind: 'HardBounce' } & RefusalDetails)
  | ({ kind: 'PolicyRejection' } & RefusalDetails)
  | ({ kind: 'SoftBounce' } & RefusalDetails)
  | {
      kind: 'Transient';
      reason: TransientReason;
      smtpResponse?: string;
      statusCode?: number;
      enhancedStatus?: string;
      summary: string;
    };

const ENHANCED_STATUS = /^([245])\.(\d{1,3})\.(\d{1,3})$/;
const ENHANCED_IN_TEXT = /^(?:\d{3}[ -])?([245]\.\d{1,3}\.\d{1,3})(?=$|[\s,;:)\]])/;
const POLICY_WORDS =
  /\b(spam|blocked|block ?list|black ?list|blacklisted|policy|reputation|spf|dkim|dmarc|authenticat\w*|unauthenticated)\b/i;

/** RFC 3463 / IANA descriptions of the codes most often met, for event summaries. */
const ENHANCED_SUMMARIES: Readonly<Record<string, string>> = {
  'X.1.0': 'Other address status',
  'X.1.1': 'Bad destination mailbox address',
  'X.1.2': 'Bad destination system address',
  'X.1.3': 'Bad destination mailbox address syntax',
  'X.1.4': 'Destination mailbox address ambiguous',
  'X.1.6': 'Destination mailbox has moved, no forwarding address',
  'X.1.7': "Bad sender's mailbox address syntax",
  'X.1.8': "Bad sender's system address",
  'X.1.10': 'Recipient address has null MX',
  'X.2.0': 'Other or undefined mailbox status',
  'X.2.1': 'Mailbox disabled, not accepting messages',
  'X.2.2': 'Mailbox full',
  'X.2.3': 'Message length exceeds administrative limit',
  'X.2.4': 'Mailing list expansion problem',
  'X.3.0': 'Other or undefined mail system status',
  'X.3.4': 'Message too big for system',
  'X.4.0': 'Other or undefined network or routing status',
  'X.4.1': 'No answer from host',
  'X.4.4': 'Unable to route',
  'X.4.7': 'Delivery time expired',
  'X.5.0': 'Other or undefined protocol status',
  'X.6.0': 'Other or undefined media error',
  'X.7.0': 'Other or undefined security status',
  'X.7.1': 'Delivery not authorized, message refused',
  'X.7.23': 'SPF validation failed',
  'X.7.25': 'Reverse DNS validation failed',
  'X.7.26': 'Multiple authentication checks failed',
  'X.7.27': 'Sender address has null MX',
};

const CLASS_SUMMARIES: Readonly<Record<string, string>> = {
  '1': 'Addressing status',
  '2': 'Mailbox status',
  '3': 'Mail system status',
  '4': 'Network or routing status',
  '5': 'Mail delivery protocol status',
  '6': 'Message content or media status',
  '7': 'Security or policy status',
};

interface EnhancedStatus {
  code: string;
  klass: number;
  subject: number;
  detail: number;
}

function parseEnhanced(code: string | undefined): EnhancedStatus | undefined {
  const match = code === undefined ? null : ENHANCED_STATUS.exec(code.trim());
  if (!match) return undefined;
  const [, klass, subject, detail] = match;
  return {
    code: `${klass}.${Number(subject)}.${Number(detail)}`,
    klass: Number(klass),
    subject: Number(subject),
    detail: Number(detail),
  };
}

/** The enhanced status code in an SMTP reply text, as "5.1.1", or undefined. */
export function parseEnhancedStatus(text: string): string | undefined {
  const match = ENHANCED_IN_TEXT.exec(text.trim());
  return match ? parseEnhanced(match[1])?.code : undefined;
}

function summaryOf(code: number, enhanced: EnhancedStatus | undefined): string {
  if (enhanced) {
    const known = ENHANCED_SUMMARIES[`X.${enhanced.subject}.${enhanced.detail}`];
    if (known) return known;
    const family = CLASS_SUMMARIES[String(enhanced.subject)];
    if (family) return `${family} (${enhanced.code})`;
  }
  return `SMTP reply ${code}`;
}

/** The reply as one line, led by its code ("550 5.1.1 user unknown"). */
function smtpResponseOf(code: number, text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.startsWith(String(code)) ? line : `${code} ${line}`.trim();
}

function classifyPermanent(code: number, enhanced: EnhancedStatus | undefined, text: string) {
  if (enhanced && enhanced.subject !== 0) {
    if (enhanced.subject === 1)
      return enhanced.detail === 7 || enhanced.detail === 8 ? 'PolicyRejection' : 'HardBounce';
    if (enhanced.subject === 2 && enhanced.detail === 1) return 'HardBounce';
    if (enhanced.subject === 7) return 'PolicyRejection';
    return 'SoftBounce';
  }
  if (POLICY_WORDS.test(text)) return 'PolicyRejection';
  if (code === 550 || code === 551 || code === 553) return 'HardBounce';
  return 'SoftBounce';
}

export function classifyDeliveryAttempt(attempt: DeliveryAttempt): DeliveryClassification {
  switch (attempt.kind) {
    case 'timeout':
      return { kind: 'Transient', reason: 'timeout', summary: 'The receiving server did not answer in time' };
    case 'connection':
      return {
        kind: 'Transient',
        reason: 'connection',
        summary: `Could not connect to the receiving server: ${attempt.text.replace(/\s+/g, ' ').trim()}`,
      };
    case 'response': {
      const { code, text } = attempt;
      const codeClass = Math.floor(code / 100);
      const found = parseEnhanced(attempt.enhancedStatus ?? parseEnhancedStatus(text));
      const enhanced = found && found.klass === codeClass ? found : undefined;
      const smtpResponse = smtpResponseOf(code, text);
      const details = {
        smtpResponse,
        statusCode: code,
        ...(enhanced && { enhancedStatus: enhanced.code }),
      };
      if (codeClass === 2) return { kind: 'Delivered', ...details };
      if (codeClass === 5) {
        return { kind: classifyPermanent(code, enhanced, text), ...details, summary: summaryOf(code, enhanced) };
      }
      return { kind: 'Transient', reason: 'response', ...details, summary: summaryOf(code, enhanced) };
    }
    default:
      return assertNever(attempt);
  }
}
