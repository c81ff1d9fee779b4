/**
 * Validation of what callers send: the one address rule set (recipients, senders, suppressions, members), a send
 * request's fields and limits, attachments. Pure functions that answer with a result, never throw for bad input,
 * and keep no state (a cache is the caller's, e.g. the API's address list cache).
 */
export {
  addressDomain,
  canonicalAddress,
  describeType,
  parseAddressList,
  parseEmailAddress,
  type AddressListParser,
  type AddressResult,
  type Mailbox,
} from './addresses';
export {
  decodedBase64Length,
  fileExtension,
  FORBIDDEN_ATTACHMENT_EXTENSIONS,
  isForbiddenAttachmentName,
  isMimeType,
  isStrictBase64,
  unwrapBase64,
} from './attachments';
export * from './limits';
export { utf8Length } from './size';
export {
  TRACK_LINKS_VALUES,
  type MessageAttachment,
  type MessageHeader,
  type OutboundMessage,
  type TemplateUsed,
  type TrackLinks,
} from './outboundMessage';
export {
  validateBatchSize,
  validateSendRequest,
  type BatchSizeValidation,
  type SendRequestValidation,
} from './sendRequest';
export { RESERVED_HEADER_NAMES, type SendRequestError, type SendRequestErrorCode } from './sendRequestFields';
