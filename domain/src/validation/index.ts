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
} from './attachments';
export * from './limits';
export { utf8Length } from './size';
export {
  RESERVED_HEADER_NAMES,
  TRACK_LINKS_VALUES,
  validateBatchSize,
  validateSendRequest,
  type BatchSizeValidation,
  type MessageAttachment,
  type MessageHeader,
  type OutboundMessage,
  type SendRequestError,
  type SendRequestErrorCode,
  type SendRequestValidation,
  type TrackLinks,
} from './sendRequest';
