/**
 * The mail that comes back to our return path, read from its raw bytes (returnedMail.ts): MIME parsed here with
 * postal-mime, the report fields and what the message is decided in the domain (`@sendline/domain`'s returns/).
 */
export {
  READING_FAILED,
  readReturnedMail,
  RETURNED_MAIL_LIMITS,
  returnedMailParts,
  textOfHtml,
  UNPARSABLE_MIME,
} from './returnedMail';
export {
  authenticateInboundMail,
  INBOUND_MAIL_LIMITS,
  parseInboundMail,
  type InboundAttachment,
  type InboundAuthentication,
  type InboundMailbox,
  type ParsedInboundMail,
} from './inboundMail';
