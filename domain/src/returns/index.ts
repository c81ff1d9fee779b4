/**
 * The mail that comes back to our return path, read: the RFC 3464 delivery-status fields (deliveryStatus.ts) and
 * the RFC 5965 feedback-report fields (feedbackReport.ts), parsed by hand from their header blocks (fields.ts). Pure:
 * text in, data out.
 */
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
export type { OriginalMessage, ReportedAction, ReportedRecipient, ReturnedMail, ReturnedMailParts } from './types';
