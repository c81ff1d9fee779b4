/**
 * The mail that comes back to our return path, read: the RFC 3464 delivery-status fields (deliveryStatus.ts) and
 * the RFC 5965 feedback-report fields (feedbackReport.ts) parsed by hand from their header blocks (fields.ts), a
 * bounce in prose (proseBounce.ts), automatic replies (autoReply.ts), the original message a report is about
 * (originalMessage.ts); what the message is (returnedMail.ts, from the parts infra's MIME parsing finds) and what it
 * means for each recipient (verdicts.ts, with the same classifier as an SMTP answer). Pure: text in, data out.
 */
export { isAutomaticReply } from './autoReply';
export {
  MAX_REPORTED_RECIPIENTS,
  normalisedStatus,
  parseDeliveryStatus,
  type DeliveryStatusFields,
} from './deliveryStatus';
export {
  COMPLAINT_FEEDBACK_TYPES,
  isComplaintFeedbackType,
  parseFeedbackReport,
  type FeedbackReportFields,
} from './feedbackReport';
export { parseFieldBlocks, stripComments, type ReportField } from './fields';
export { originalMessageOf, repliedMessageOf, sendlineMessageIdOf } from './originalMessage';
export { looksLikeBounce, originalCopyInProse, readProseBounce } from './proseBounce';
export {
  AUTOMATIC_REPLY_SUMMARY,
  outcomeWeight,
  returnedOutcomes,
  SPAM_COMPLAINT_SUMMARY,
  type RecipientReturn,
} from './outcomes';
export { returnedMailOf } from './returnedMail';
export type { OriginalMessage, ReportedAction, ReportedRecipient, ReturnedMail, ReturnedMailParts } from './types';
export {
  addressesNamedBy,
  deliveryAttemptOf,
  returnedMailVerdicts,
  type BounceClassification,
  type DelayClassification,
  type ReturnVerdict,
} from './verdicts';
