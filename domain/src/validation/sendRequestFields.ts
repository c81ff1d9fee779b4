import type { DomainErrorCode } from '../domainError';
import { describeType, type AddressListParser, type Mailbox } from './addresses';
import { fileExtension, isForbiddenAttachmentName, isMimeType, unwrapBase64 } from './attachments';
import {
  MAX_ATTACHMENT_NAME_LENGTH,
  MAX_METADATA_FIELDS,
  MAX_METADATA_KEY_LENGTH,
  MAX_METADATA_VALUE_LENGTH,
  OUTBOUND_STREAM,
} from './limits';
import { TRACK_LINKS_VALUES, type MessageAttachment, type MessageHeader, type TrackLinks } from './outboundMessage';

/**
 * The send request's field readers: each reads one wire field (PascalCase, `null` counting as absent) into its
 * part of the outbound message, or refuses it by throwing a Refusal that names the field. Only the request-level
 * validation (sendRequest.ts) calls them, and it turns a Refusal into its answer; nothing here is thrown past it.
 */

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
/** Commas and blanks at either end of an address list: empty list items. */
const LIST_ENDS = /^[\s,]+|[\s,]+$/g;

export class Refusal {
  constructor(
    readonly code: SendRequestErrorCode,
    readonly field: string | undefined,
    readonly message: string,
  ) {}
}

export function refuse(field: string, message: string, code: SendRequestErrorCode = 'InvalidEmailRequest'): never {
  throw new Refusal(code, field, message);
}

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The field's value, with `null` treated as absent. */
export function field(body: Json, name: string): unknown {
  const value = body[name];
  return value === null ? undefined : value;
}

export function optionalString(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') refuse(name, `${name} must be a string, not ${describeType(value)}`);
  return value;
}

export function singleLine(value: string, name: string, maxLength: number): string {
  if (CR_OR_LF.test(value)) refuse(name, `${name} must not contain line breaks (CR or LF)`);
  if (value.length > maxLength)
    refuse(name, `${name} must be at most ${maxLength} characters (it has ${value.length})`);
  return value;
}

export function addressField(value: unknown, name: string, required: boolean, parseList: AddressListParser): Mailbox[] {
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
    // Empty list items at either end ("a@x.com, b@y.com," as a list joined with a trailing comma) are dropped.
    const list = text.replace(LIST_ENDS, '');
    if (list === '') continue;
    const parsed = parseList(list);
    if (!parsed.ok) refuse(label, `${label}: ${parsed.reason}`);
    mailboxes.push(...parsed.value);
  }
  if (required && mailboxes.length === 0) refuse(name, `${name} is required: give at least one recipient address`);
  return mailboxes;
}

export function fromField(value: unknown, parseList: AddressListParser): Mailbox {
  if (value === undefined || value === '') refuse('From', 'From is required: give the sender address');
  if (typeof value !== 'string') refuse('From', `From must be a string, not ${describeType(value)}`);
  const parsed = parseList(value);
  if (!parsed.ok) refuse('From', `From: ${parsed.reason}`);
  const [sender, ...others] = parsed.value;
  if (!sender || others.length > 0) refuse('From', `From must be exactly one address, not ${parsed.value.length}`);
  return sender;
}

export function headersField(value: unknown): MessageHeader[] {
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

/**
 * A Metadata value as the string it is kept as: Postmark reads every value as a string ("All metadata field values
 * will be interpreted and returned in webhook payloads as strings"), so a number or a boolean is taken as its JSON
 * text (42 → "42", true → "true"). An object or an array is refused.
 */
function metadataValue(item: unknown, at: string): string {
  if (typeof item === 'string') return item;
  if ((typeof item === 'number' && Number.isFinite(item)) || typeof item === 'boolean') return String(item);
  refuse(at, `${at} must be a string (or a number or boolean, kept as text), not ${describeType(item)}`);
}

export function metadataField(value: unknown): Record<string, string> {
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
    if (item === null) continue;
    const text = metadataValue(item, at);
    if (text.length > MAX_METADATA_VALUE_LENGTH) {
      refuse(at, `${at} must be at most ${MAX_METADATA_VALUE_LENGTH} characters (it has ${text.length})`);
    }
    Object.defineProperty(metadata, key, { value: text, enumerable: true, writable: true, configurable: true });
  }
  return metadata;
}

export function attachmentsField(value: unknown): MessageAttachment[] {
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
    if (typeof content !== 'string' || content.trim() === '') {
      refuse(`${at}.Content`, `${at}.Content is required (the file's bytes in base64)`);
    }
    const bytes = unwrapBase64(content);
    if (bytes === undefined) {
      refuse(
        `${at}.Content`,
        `${at}.Content is not valid base64 (standard alphabet, padded; lines may be broken by CRLF or LF)`,
      );
    }
    if (typeof contentType !== 'string' || contentType === '') {
      refuse(`${at}.ContentType`, `${at}.ContentType is required (a MIME type such as application/pdf)`);
    }
    if (!isMimeType(contentType)) {
      refuse(`${at}.ContentType`, `${at}.ContentType ${JSON.stringify(contentType)} is not a valid type/subtype`);
    }
    const attachment: MessageAttachment = { name, content: bytes, contentType: contentType.trim() };
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

export function trackOpensField(value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') refuse('TrackOpens', `TrackOpens must be true or false, not ${describeType(value)}`);
  return value;
}

export function trackLinksField(value: unknown): TrackLinks {
  if (value === undefined) return 'None';
  const found = TRACK_LINKS_VALUES.find((allowed) => allowed === value);
  if (!found) refuse('TrackLinks', `TrackLinks must be one of ${TRACK_LINKS_VALUES.join(', ')}`);
  return found;
}

export function messageStreamField(value: unknown): 'outbound' {
  if (value === undefined || value === OUTBOUND_STREAM) return OUTBOUND_STREAM;
  refuse(
    'MessageStream',
    `MessageStream ${JSON.stringify(value)} does not exist; the only message stream is "${OUTBOUND_STREAM}"`,
    'InvalidMessageStream',
  );
}
