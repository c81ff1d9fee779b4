import { describeType, parseAddressList, type AddressListParser } from './addresses';
import { decodedBase64Length } from './attachments';
import {
  MAX_BATCH_MESSAGES,
  MAX_MESSAGE_SIZE_BYTES,
  MAX_RECIPIENTS,
  MAX_SUBJECT_LENGTH,
  MAX_TAG_LENGTH,
} from './limits';
import type { OutboundMessage } from './outboundMessage';
import {
  addressField,
  attachmentsField,
  field,
  fromField,
  headersField,
  isObject,
  messageStreamField,
  metadataField,
  optionalString,
  Refusal,
  refuse,
  singleLine,
  trackLinksField,
  trackOpensField,
  type SendRequestError,
} from './sendRequestFields';
import { utf8Length } from './size';

/**
 * The send request: Postmark's wire JSON (PascalCase) turned into the domain's outbound message.
 *
 * Rules, in the order they are checked (the first broken rule is reported):
 * 1. The body is a JSON object (else IncompatibleJson). Unknown fields are ignored: Postmark clients send
 *    extras. A field that is `null` counts as absent (several Postmark clients send nulls for unset fields).
 * 2. MessageStream: absent or "outbound" (else InvalidMessageStream).
 * 3. From: required, exactly one mailbox. To: required. Cc, Bcc, ReplyTo: optional. Each is a string
 *    (one address or a comma-separated list, "a@x.com, B <b@y.com>") or an array of such strings; commas and
 *    blanks at either end of a list (a trailing comma) are empty items and dropped.
 * 4. At most 50 recipients in To + Cc + Bcc, counted as given.
 * 5. Subject: optional (absent means ""), a string without CR/LF, ≤ 2000 characters.
 *    Tag: optional, a string without CR/LF, ≤ 1000 characters ("" means no tag).
 * 6. TextBody / HtmlBody: at least one non-empty ("" counts as absent).
 * 7. Headers: an array of { Name, Value }; Name an RFC 5322 field name (printable ASCII 33..126 except
 *    ':'), Value a string without CR/LF; names that would override identity or structure are refused.
 * 8. Metadata: an object of at most 10 values; keys 1..20 characters, values ≤ 80 characters. A value is a
 *    string, or a number or boolean kept as its text ("42"); a null value counts as absent.
 * 9. Attachments: an array of { Name, Content, ContentType, ContentID? }; Name without path separators or
 *    line breaks and not of a forbidden type (ForbiddenAttachmentType); Content base64, strict or wrapped in
 *    lines as RFC 2045 writes it (kept unwrapped; see `unwrapBase64`);
 *    ContentType `type/subtype`; ContentID without CR/LF or angle brackets.
 * 10. TrackOpens a boolean (default false); TrackLinks one of None, HtmlAndText, HtmlOnly, TextOnly
 *    (default None).
 * 11. Size: subject + bodies + custom headers + decoded attachments ≤ 10 MiB (else PayloadTooLarge).
 *
 * Every other broken rule has the code InvalidEmailRequest. Every message names the field. Each field's rules are
 * read by its reader in sendRequestFields.ts; this module runs them in order and checks the request as a whole.
 */

export type SendRequestValidation = { ok: true; message: OutboundMessage } | { ok: false; error: SendRequestError };

function sizeOf(message: Omit<OutboundMessage, 'sizeBytes'>): number {
  let size = utf8Length(message.subject);
  size += utf8Length(message.textBody ?? '') + utf8Length(message.htmlBody ?? '');
  for (const header of message.headers) size += utf8Length(header.name) + utf8Length(header.value) + 4; // ": " and CRLF
  for (const attachment of message.attachments) size += decodedBase64Length(attachment.content);
  return size;
}

function validate(body: unknown, parseList: AddressListParser): OutboundMessage {
  if (!isObject(body)) {
    refuse(
      '',
      `The request body must be a JSON object describing one message, not ${describeType(body)}`,
      'IncompatibleJson',
    );
  }
  const messageStream = messageStreamField(field(body, 'MessageStream'));
  const from = fromField(field(body, 'From'), parseList);
  const to = addressField(field(body, 'To'), 'To', true, parseList);
  const cc = addressField(field(body, 'Cc'), 'Cc', false, parseList);
  const bcc = addressField(field(body, 'Bcc'), 'Bcc', false, parseList);
  const replyTo = addressField(field(body, 'ReplyTo'), 'ReplyTo', false, parseList);
  const recipients = to.length + cc.length + bcc.length;
  if (recipients > MAX_RECIPIENTS) {
    refuse('To', `To, Cc and Bcc may hold at most ${MAX_RECIPIENTS} recipients together (they hold ${recipients})`);
  }
  const subject = singleLine(optionalString(field(body, 'Subject'), 'Subject') ?? '', 'Subject', MAX_SUBJECT_LENGTH);
  const tagText = singleLine(optionalString(field(body, 'Tag'), 'Tag') ?? '', 'Tag', MAX_TAG_LENGTH);
  const textBody = optionalString(field(body, 'TextBody'), 'TextBody') || undefined;
  const htmlBody = optionalString(field(body, 'HtmlBody'), 'HtmlBody') || undefined;
  if (textBody === undefined && htmlBody === undefined) {
    refuse('TextBody', 'TextBody or HtmlBody is required: give at least one non-empty body');
  }
  const headers = headersField(field(body, 'Headers'));
  const metadata = metadataField(field(body, 'Metadata'));
  const attachments = attachmentsField(field(body, 'Attachments'));
  const trackOpens = trackOpensField(field(body, 'TrackOpens'));
  const trackLinks = trackLinksField(field(body, 'TrackLinks'));

  const message: Omit<OutboundMessage, 'sizeBytes'> = {
    from,
    to,
    cc,
    bcc,
    replyTo,
    subject,
    ...(tagText !== '' && { tag: tagText }),
    ...(textBody !== undefined && { textBody }),
    ...(htmlBody !== undefined && { htmlBody }),
    headers,
    metadata,
    attachments,
    trackOpens,
    trackLinks,
    messageStream,
  };
  const sizeBytes = sizeOf(message);
  if (sizeBytes > MAX_MESSAGE_SIZE_BYTES) {
    refuse(
      '',
      `The message is ${sizeBytes} bytes (subject, bodies, headers and decoded attachments); at most ${MAX_MESSAGE_SIZE_BYTES} bytes (10 MB) are allowed`,
      'PayloadTooLarge',
    );
  }
  return { ...message, sizeBytes };
}

/**
 * Turns a send request's JSON body into an outbound message, or says which rule it broke (see above).
 * `parseList` reads each address field; a caller may pass one that remembers answers (the API's cache), as
 * long as it answers exactly as `parseAddressList`.
 */
export function validateSendRequest(
  body: unknown,
  parseList: AddressListParser = parseAddressList,
): SendRequestValidation {
  try {
    return { ok: true, message: validate(body, parseList) };
  } catch (failure) {
    if (failure instanceof Refusal) {
      const error: SendRequestError = { code: failure.code, message: failure.message };
      if (failure.field) error.field = failure.field;
      return { ok: false, error };
    }
    throw failure;
  }
}

export type BatchSizeValidation =
  { ok: true } | { ok: false; error: { code: 'TooManyBatchMessages'; message: string } };

/** A batch holds at most 500 messages (MAX_BATCH_MESSAGES); more is refused with TooManyBatchMessages. */
export function validateBatchSize(count: number): BatchSizeValidation {
  if (count <= MAX_BATCH_MESSAGES) return { ok: true };
  return {
    ok: false,
    error: {
      code: 'TooManyBatchMessages',
      message: `A batch may hold at most ${MAX_BATCH_MESSAGES} messages (it holds ${count})`,
    },
  };
}
