/**
 * The limits a send request is held to. Postmark-like where Postmark publishes a figure; each is
 * checked by `validateSendRequest` (or, for the batch size, by `validateBatchSize`).
 */

/** To + Cc + Bcc together, counted as given (before duplicates are merged). */
export const MAX_RECIPIENTS = 50;
/** Bodies, subject, custom headers and decoded attachments together: 10 MiB. */
export const MAX_MESSAGE_SIZE_BYTES = 10 * 1024 * 1024;
/** Messages in one batch request. */
export const MAX_BATCH_MESSAGES = 500;
export const MAX_SUBJECT_LENGTH = 2000;
export const MAX_TAG_LENGTH = 1000;
export const MAX_METADATA_FIELDS = 10;
export const MAX_METADATA_KEY_LENGTH = 20;
export const MAX_METADATA_VALUE_LENGTH = 80;
/** An attachment's file name, in characters. */
export const MAX_ATTACHMENT_NAME_LENGTH = 255;
/** The only message stream the service has. */
export const OUTBOUND_STREAM = 'outbound';
