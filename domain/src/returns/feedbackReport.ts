import { addressOfField, parseFieldBlocks, stripComments } from './fields';

/**
 * The fields of a message/feedback-report part (RFC 5965 §3.1, §3.2): one block of fields. Feedback-Type is
 * lowercased without comments; Original-Rcpt-To may repeat, every one is kept; Arrival-Date falls back to
 * Received-Date, which the providers' reports used before the RFC (draft ARF). Any other field is left out.
 */

export interface FeedbackReportFields {
  feedbackType?: string;
  userAgent?: string;
  version?: string;
  originalMailFrom?: string;
  originalRcptTo: string[];
  arrivalDate?: string;
}

/** More than any report names: the RFC's one recipient, or a few. */
const MAX_RCPT_TO = 100;

/**
 * Which feedback types are a spam complaint: `abuse` (the recipient marked it as spam: Yahoo, AOL, Microsoft's
 * JMRP all say so) and `fraud` (the recipient reported it as phishing or fraud). Both are a person saying they
 * do not want the mail. Not counted: `not-spam` (the opposite, RFC 6430), `virus` (a scanner's finding, not the
 * recipient's wish: Postmark keeps it apart as VirusNotification), `auth-failure` (a DMARC/DKIM failure report,
 * RFC 6591), `other`, `opt-out` and any type we do not know.
 */
export const COMPLAINT_FEEDBACK_TYPES: readonly string[] = ['abuse', 'fraud'];

export function isComplaintFeedbackType(feedbackType: string): boolean {
  return COMPLAINT_FEEDBACK_TYPES.includes(feedbackType.toLowerCase());
}

export function parseFeedbackReport(text: string): FeedbackReportFields {
  const fields = new Map<string, string>();
  const originalRcptTo: string[] = [];
  for (const block of parseFieldBlocks(text)) {
    for (const field of block) {
      if (field.name === 'original-rcpt-to') {
        const address = addressOfField(field.value);
        if (address !== undefined && originalRcptTo.length < MAX_RCPT_TO) originalRcptTo.push(address);
      } else if (!fields.has(field.name) && field.value !== '') {
        fields.set(field.name, field.value);
      }
    }
  }
  const feedbackType = fields.has('feedback-type')
    ? stripComments(fields.get('feedback-type')!).toLowerCase() || undefined
    : undefined;
  const version = fields.has('version') ? stripComments(fields.get('version')!) || undefined : undefined;
  const originalMailFrom = fields.has('original-mail-from')
    ? addressOfField(fields.get('original-mail-from')!)
    : undefined;
  const userAgent = fields.get('user-agent');
  const arrivalDate = fields.get('arrival-date') ?? fields.get('received-date');
  return {
    ...(feedbackType !== undefined && { feedbackType }),
    ...(userAgent !== undefined && { userAgent }),
    ...(version !== undefined && { version }),
    ...(originalMailFrom !== undefined && { originalMailFrom }),
    originalRcptTo,
    ...(arrivalDate !== undefined && { arrivalDate }),
  };
}
