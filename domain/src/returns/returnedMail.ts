import { isAutomaticReply } from './autoReply';
import { parseDeliveryStatus } from './deliveryStatus';
import { parseFeedbackReport } from './feedbackReport';
import { headerValue, shownHeader } from './fields';
import { originalMessageOf, repliedMessageOf } from './originalMessage';
import { looksLikeBounce, ownAddressesOf, readProseBounce } from './proseBounce';
import type { OriginalMessage, ReturnedMail, ReturnedMailParts } from './types';

/**
 * What a returned message is, from its parts (infra's readReturnedMail finds them in the MIME). In this order:
 * 1. a message/feedback-report part makes it a Complaint (Unrecognized without a Feedback-Type);
 * 2. a message/delivery-status part makes it a DeliveryReport of the recipients it names; one that names none is
 *    read from the prose beside it, else Unrecognized;
 * 3. a message that looks like a bounce (`looksLikeBounce`) is read from its prose (prose: true) where a recipient
 *    and a status code can be found, else it is Unrecognized (a bounce we cannot read is looked at, not taken for
 *    an automatic reply);
 * 4. an automatic reply (`isAutomaticReply`) is an AutoReply; its original is the attached one if any, else the
 *    message its In-Reply-To / References name;
 * 5. anything else is Unrecognized, with its subject and From to be looked at.
 * Bounces come before automatic replies because bounces carry `Auto-Submitted: auto-replied` too.
 */
export function returnedMailOf(parts: ReturnedMailParts): ReturnedMail {
  const subject = shownHeader(headerValue(parts.headers, 'subject'));
  const from = shownHeader(headerValue(parts.headers, 'from'));
  const unrecognized = (reason: string): ReturnedMail => ({
    kind: 'Unrecognized',
    reason,
    ...(subject !== undefined && { subject }),
    ...(from !== undefined && { from }),
  });
  const original: OriginalMessage = parts.originalHeaders ? originalMessageOf(parts.originalHeaders) : {};

  if (parts.feedbackReport !== undefined) {
    const report = parseFeedbackReport(parts.feedbackReport);
    if (report.feedbackType === undefined) return unrecognized('a feedback report without a Feedback-Type');
    return {
      kind: 'Complaint',
      feedbackType: report.feedbackType,
      ...(report.userAgent !== undefined && { userAgent: report.userAgent }),
      originalRcptTo: report.originalRcptTo,
      ...(report.originalMailFrom !== undefined && { originalMailFrom: report.originalMailFrom }),
      ...(report.arrivalDate !== undefined && { arrivalDate: report.arrivalDate }),
      original,
    };
  }

  const prose = () =>
    parts.text === undefined
      ? []
      : readProseBounce(parts.text, {
          ...(subject !== undefined && { subject }),
          ownAddresses: ownAddressesOf(parts.headers),
        });

  if (parts.deliveryStatus !== undefined) {
    const status = parseDeliveryStatus(parts.deliveryStatus);
    if (status.recipients.length > 0) {
      return {
        kind: 'DeliveryReport',
        prose: false,
        ...(status.reportingMta !== undefined && { reportingMta: status.reportingMta }),
        recipients: status.recipients,
        original,
      };
    }
    const recipients = prose();
    if (recipients.length > 0) return { kind: 'DeliveryReport', prose: true, recipients, original };
    return unrecognized('a delivery report that names no recipient');
  }

  if (looksLikeBounce(parts.headers, parts.reportType)) {
    const recipients = prose();
    if (recipients.length > 0) return { kind: 'DeliveryReport', prose: true, recipients, original };
    return unrecognized('a bounce in which no recipient with a status code can be found');
  }

  if (isAutomaticReply(parts.headers)) {
    return {
      kind: 'AutoReply',
      ...(subject !== undefined && { subject }),
      ...(from !== undefined && { from }),
      original: parts.originalHeaders ? original : repliedMessageOf(parts.headers),
    };
  }

  if (parts.reportType === 'feedback-report') return unrecognized('a feedback report without its feedback-report part');
  return unrecognized('neither a report, a bounce nor an automatic reply');
}
