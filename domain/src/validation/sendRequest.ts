import type { DomainErrorCode } from '../domainError';
import { describeType, parseAddressList, type AddressListParser, type Mailbox } from './addresses';
import {
  decodedBase64Length,
  fileExtension,
  isForbiddenAttachmentName,
  isMimeType,
  isStrictBase64,
} from './attachments';
import {
  MAX_ATTACHMENT_NAME_LENGTH,
  MAX_BATCH_MESSAGES,
  MAX_MESSAGE_SIZE_BYTES,
  MAX_METADATA_FIELDS,
  MAX_METADATA_KEY_LENGTH,
  MAX_METADATA_VALUE_LENGTH,
  MAX_RECIPIENTS,
  MAX_SUBJECT_LENGTH,
  MAX_TAG_LENGTH,
  OUTBOUND_STREAM,
} from './limits';
import { utf8Length } from './size';

/**
 * The send request: Postmark's wire JSON (PascalCase) turned into the domain's outbound message.
 *
 * Rules, in the order they are checked (the first broken rule is reported):
 * 1. The body is a JSON object (else IncompatibleJson). Unknown fields are ignored: Postmark clients send
 *    extras. A field that is `null` counts as absent (several Postmark clients send nulls for unset fields).
 * 2. MessageStream: absent or "outbound" (else InvalidMessageStream).
 * 3. From: required, exactly one mailbox. To: required. Cc, Bcc, ReplyTo: optional. Each is a string
 *    (one address or a comma-separated list, "a@x.com, B <b@y.com>") or an array of such strings.
 * 4. At most 50 recipients in To + Cc + Bcc, counted as given.
 * 5. Subject: optional (absent means ""), a string without CR/LF, ≤ 2000 characters.
 *    Tag: optional, a string without CR/LF, ≤ 1000 characters ("" means no tag).
 * 6. TextBody / HtmlBody: at least one non-empty ("" counts as absent).
 * 7. Headers: an array of { Name, Value }; Name an RFC 5322 field name (printable ASCII 33..126 except
 *    ':'), Value a string without CR/LF; names that would override identity or structure are refused.
 * 8. Metadata: an object of at most 10 string values; keys 1..20 characters, values ≤ 80 characters.
 * 9. Attachments: an array of { Name, Content, ContentType, ContentID? }; Name without path separators or
 *    line breaks and not of a forbidden type (ForbiddenAttachmentType); Content strict base64;
 *    ContentType `type/subtype`; ContentID without CR/LF or angle brackets.
 * 10. TrackOpens a boolean (default false); TrackLinks one of None, HtmlAndText, HtmlOnly, TextOnly
 *    (default None).
 * 11. Size: subject + bodies + custom headers + decoded attachments ≤ 10 MiB (else PayloadTooLarge).
 *
 * Every other broken rule has the code InvalidEmailRequest. Every message names the field.
 */

export type TrackLinks = 'None' | 'HtmlAndText' | 'HtmlOnly' | 'TextOnly';
export const TRACK_LINKS_VALUES: readonly TrackLinks[] = ['None', 'HtmlAndText', 'HtmlOnly', 'TextOnly'];

export interface MessageHeader {
  name: string;
  value: string;
}

export interface MessageAttachment {
  name: string;
  /** Base64 (strict, as checked). */
  content: string;
  contentType: string;
  contentId?: string;
}

/** A send request that passed validation: what the API puts into AcceptMessage. */
export interface OutboundMessage {
  from: Mailbox;
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  replyTo: Mailbox[];
  /** "" when the request had none. */
  subject: string;
  tag?: string;
  textBody?: string;
  htmlBody?: string;
  headers: MessageHeader[];
  metadata: Record<string, string>;
  attachments: MessageAttachment[];
  trackOpens: boolean;
  trackLinks: TrackLinks;
  messageStream: 'outbound';
  /** Subject + bodies + custom headers + decoded attachments, in bytes (UTF-8). */
  sizeBytes: number;
}

export type SendRequestErrorCode = Extract<
  DomainErrorCode,
  'IncompatibleJson' | 'InvalidEmailRequest' | 'InvalidMessageStream' | 'ForbiddenAttachmentType' | 'PayloadTooLarge'
>;

export interface SendRequestError {
  code: SendRequestErrorCode;
  /** Human text naming the field, e.g. `To: "bob" is not a valid email address ...`. */
  message: string;
  /** The wire field at fault (`Attachments[2].Name`), when there is one. */
  field?: string;
}

export type SendRequestValidation = { ok: true; message: OutboundMessage } | { ok: false; error: SendRequestError };

/**
 * Header names a request may not set: they carry the sender's identity or the message's structure,
 * which the service writes itself (and DKIM signs).
 */
export const RESERVED_HEADER_NAMES: readonly string[] = [
  'From',
  'To',
  'Cc',
  'Bcc',
  'Subject',
  'Date',
  'Message-ID',
  'DKIM-Signature',
  'Content-Type',
  'Content-Transfer-Encoding',
  'MIME-Version',
  'Return-Path',
  'Received',
  'Sender',
];
const RESERVED_HEADERS = new Set(RESERVED_HEADER_NAMES.map((name) => name.toLowerCase()));
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;
const CR_OR_LF = /[\r\n]/;

class Refusal {
  constructor(
    readonly code: SendRequestErrorCode,
    readonly field: string | undefined,
    readonly message: string,
  ) {}
}

function refuse(field: string, message: string, code: SendRequestErrorCode = 'InvalidEmailRequest'): never {
  throw new Refusal(code, field, message);
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The field's value, with `null` treated as absent. */
function field(body: Json, name: string): unknown {
  const value = body[name];
  return value === null ? undefined : value;
}

function optionalString(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') refuse(name, `${name} must be a string, not ${describeType(value)}`);
  return value;
}

function singleLine(value: string, name: string, maxLength: number): string {
  if (CR_OR_LF.test(value)) refuse(name, `${name} must not contain line breaks (CR or LF)`);
  if (value.length > maxLength)
    refuse(name, `${name} must be at most ${maxLength} characters (it has ${value.length})`);
  return value;
}

function addressField(value: unknown, name: string, required: boolean, parseList: AddressListParser): Mailbox[] {
  if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) {
    if (required) refuse(name, `${name} is required: give at least one recipient address`);
    return [];
  }
  const parts: Array<{ text: string; label: string }> = [];
  if (typeof value === 'string') parts.push({ text: value, label: name });
  else if (Array.isArray(value)) {
    value.forEach((item, index) => {
      if (typeof item !== 'string') {
        refuse(`${name}[${index}]`, `${name}[${index}] must be a string address, not ${describeType(item)}`);
      }
      parts.push({ text: item, label: `${name}[${index}]` });
    });
  } else {
    refuse(name, `${name} must be a string or an array of strings, not ${describeType(value)}`);
  }
  const mailboxes: Mailbox[] = [];
  for (const { text, label } of parts) {
    const parsed = parseList(text);
    if (!parsed.ok) refuse(label, `${label}: ${parsed.reason}`);
    mailboxes.push(...parsed.value);
  }
  return mailboxes;
}

function fromField(value: unknown, parseList: AddressListParser): Mailbox {
  if (value === undefined || value === '') refuse('From', 'From is required: give the sender address');
  if (typeof value !== 'string') refuse('From', `From must be a string, not ${describeType(value)}`);
  const parsed = parseList(value);
  if (!parsed.ok) refuse('From', `From: ${parsed.reason}`);
  const [sender, ...others] = parsed.value;
  if (!sender || others.length > 0) refuse('From', `From must be exactly one address, not ${parsed.value.length}`);
  return sender;
}

function headersField(value: unknown): MessageHeader[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    refuse('Headers', `Headers must be an array of { Name, Value }, not ${describeType(value)}`);
  return value.map((item: unknown, index) => {
    const at = `Headers[${index}]`;
    if (!isObject(item)) refuse(at, `${at} must be an object { Name, Value }, not ${describeType(item)}`);
    const name = field(item, 'Name');
    const headerValue = field(item, 'Value');
    if (typeof name !== 'string' || name === '') {
      refuse(`${at}.Name`, `${at}.Name must be a non-empty string`);
    }
    if (!FIELD_NAME.test(name)) {
      refuse(
        `${at}.Name`,
        `${at}.Name ${JSON.stringify(name)} is not a valid header name (printable ASCII without spaces or ':')`,
      );
    }
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      refuse(
        `${at}.Name`,
        `${at}.Name: the ${name} header is set by the service and cannot be given as a custom header` +
          ' (use the message fields for sender, recipients and subject)',
      );
    }
    if (headerValue === undefined) refuse(`${at}.Value`, `${at}.Value is required (a string)`);
    if (typeof headerValue !== 'string') {
      refuse(`${at}.Value`, `${at}.Value must be a string, not ${describeType(headerValue)}`);
    }
    if (CR_OR_LF.test(headerValue)) refuse(`${at}.Value`, `${at}.Value must not contain line breaks (CR or LF)`);
    return { name, value: headerValue };
  });
}

function metadataField(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (!isObject(value)) refuse('Metadata', `Metadata must be an object of string values, not ${describeType(value)}`);
  const entries = Object.entries(value);
  if (entries.length > MAX_METADATA_FIELDS) {
    refuse('Metadata', `Metadata may have at most ${MAX_METADATA_FIELDS} fields (it has ${entries.length})`);
  }
  const metadata: Record<string, string> = {};
  for (const [key, item] of entries) {
    const at = `Metadata.${key}`;
    if (key.length === 0 || key.length > MAX_METADATA_KEY_LENGTH) {
      refuse(at, `Metadata keys must be 1 to ${MAX_METADATA_KEY_LENGTH} characters (${JSON.stringify(key)} is not)`);
    }
    if (CR_OR_LF.test(key)) refuse(at, `Metadata key ${JSON.stringify(key)} must not contain line breaks`);
    if (typeof item !== 'string') refuse(at, `${at} must be a string, not ${describeType(item)}`);
    if (item.length > MAX_METADATA_VALUE_LENGTH) {
      refuse(at, `${at} must be at most ${MAX_METADATA_VALUE_LENGTH} characters (it has ${item.length})`);
    }
    Object.defineProperty(metadata, key, { value: item, enumerable: true, writable: true, configurable: true });
  }
  return metadata;
}

function attachmentsField(value: unknown): MessageAttachment[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    refuse('Attachments', `Attachments must be an array of { Name, Content, ContentType }, not ${describeType(value)}`);
  }
  return value.map((item: unknown, index) => {
    const at = `Attachments[${index}]`;
    if (!isObject(item))
      refuse(at, `${at} must be an object { Name, Content, ContentType }, not ${describeType(item)}`);
    const name = field(item, 'Name');
    const content = field(item, 'Content');
    const contentType = field(item, 'ContentType');
    const contentId = field(item, 'ContentID');
    if (typeof name !== 'string' || name.trim() === '') refuse(`${at}.Name`, `${at}.Name is required (a file name)`);
    if (/[\\/\r\n\0]/.test(name)) {
      refuse(`${at}.Name`, `${at}.Name ${JSON.stringify(name)} must not contain path separators or line breaks`);
    }
    if (name.length > MAX_ATTACHMENT_NAME_LENGTH) {
      refuse(`${at}.Name`, `${at}.Name must be at most ${MAX_ATTACHMENT_NAME_LENGTH} characters`);
    }
    if (isForbiddenAttachmentName(name)) {
      refuse(
        `${at}.Name`,
        `${at}.Name ${JSON.stringify(name)}: attachments of type .${fileExtension(name)} are forbidden`,
        'ForbiddenAttachmentType',
      );
    }
    if (typeof content !== 'string' || content === '') {
      refuse(`${at}.Content`, `${at}.Content is required (the file's bytes in base64)`);
    }
    if (!isStrictBase64(content)) {
      refuse(`${at}.Content`, `${at}.Content is not valid base64 (standard alphabet, padded, no line breaks)`);
    }
    if (typeof contentType !== 'string' || contentType === '') {
      refuse(`${at}.ContentType`, `${at}.ContentType is required (a MIME type such as application/pdf)`);
    }
    if (!isMimeType(contentType)) {
      refuse(`${at}.ContentType`, `${at}.ContentType ${JSON.stringify(contentType)} is not a valid type/subtype`);
    }
    const attachment: MessageAttachment = { name, content, contentType: contentType.trim() };
    if (contentId !== undefined && contentId !== '') {
      if (typeof contentId !== 'string') {
        refuse(`${at}.ContentID`, `${at}.ContentID must be a string, not ${describeType(contentId)}`);
      }
      if (/[\r\n<>]/.test(contentId)) {
        refuse(`${at}.ContentID`, `${at}.ContentID must not contain line breaks or angle brackets`);
      }
      attachment.contentId = contentId;
    }
    return attachment;
  });
}

function trackOpensField(value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') refuse('TrackOpens', `TrackOpens must be true or false, not ${describeType(value)}`);
  return value;
}

function trackLinksField(value: unknown): TrackLinks {
  if (value === undefined) return 'None';
  const found = TRACK_LINKS_VALUES.find((allowed) => allowed === value);
  if (!found) refuse('TrackLinks', `TrackLinks must be one of ${TRACK_LINKS_VALUES.join(', ')}`);
  return found;
}

function messageStreamField(value: unknown): 'outbound' {
  if (value === undefined || value === OUTBOUND_STREAM) return OUTBOUND_STREAM;
  refuse(
    'MessageStream',
    `MessageStream ${JSON.stringify(value)} does not exist; the only message stream is "${OUTBOUND_STREAM}"`,
    'InvalidMessageStream',
  );
}

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
