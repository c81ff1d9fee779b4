import {
  originalCopyInProse,
  returnedMailOf,
  type MessageHeader,
  type ReturnedMail,
  type ReturnedMailParts,
} from '@sendline/domain';
import PostalMime, { decodeWords, type Attachment, type Email } from 'postal-mime';

/**
 * Reading one message that came back to our return path (a DSN, an ARF complaint, an automatic reply, junk):
 * postal-mime parses the MIME, the domain reads the report fields and decides what the message is
 * (`returnedMailOf`). Pure (no I/O but the parsing) and total: it never throws; what it cannot read, from
 * malformed MIME to a report without recipients, is `{ kind: 'Unrecognized', reason }`.
 *
 * 1. At most RETURNED_MAIL_LIMITS.maxBytes of the message are parsed. A report puts its human-readable part, then
 *    its machine-readable part, then the original message (RFC 6522 §3): what is cut is the original's body, never
 *    needed.
 * 2. postal-mime parses with its limits lowered: more than maxDelimiterLines lines that may delimit parts (counted
 *    first), nesting deeper than maxNestingDepth parts, or more than maxHeaderBytes of headers in all reject the
 *    parse (→ Unrecognized). Attached messages are never parsed recursively (`forceRfc822Attachments`): each stays
 *    one part of bytes. The work is linear in the bytes parsed.
 * 3. The parts the domain reads are picked by type (the first of each): message/delivery-status (or
 *    message/global-delivery-status), message/feedback-report, and the original's headers from message/rfc822 (or
 *    message/global) or text/rfc822-headers (or message/global-headers), else from the copy a prose bounce quotes.
 *    Report parts are US-ASCII (global ones UTF-8): read as UTF-8, bad bytes replaced. Header values have their
 *    encoded words decoded; the text is the text/plain parts, else the HTML's text.
 */

export const RETURNED_MAIL_LIMITS = {
  /** Bytes of the message parsed. */
  maxBytes: 4 * 1024 * 1024,
  /**
   * Lines that may be part delimiters (starting with `--`), counted before parsing: real reports have a handful;
   * each part costs postal-mime a decoder of its own.
   */
  maxDelimiterLines: 2000,
  /** MIME nesting (postal-mime's default is 256; real reports nest 3 or 4 deep). */
  maxNestingDepth: 32,
  /** Header bytes across all parts (postal-mime's default is 2 MiB). */
  maxHeaderBytes: 512 * 1024,
  /** Header fields of the message handed to the domain. */
  maxHeaderFields: 500,
  /** Bytes of the original message read for its headers. */
  maxOriginalHeaderBytes: 64 * 1024,
  /** Characters of text handed to the domain. */
  maxTextChars: 256 * 1024,
} as const;

const DELIVERY_STATUS_TYPES = new Set(['message/delivery-status', 'message/global-delivery-status']);
const FEEDBACK_REPORT_TYPES = new Set(['message/feedback-report']);
const ORIGINAL_TYPES = new Set(['message/rfc822', 'message/global', 'text/rfc822-headers', 'message/global-headers']);

const utf8 = new TextDecoder('utf-8');

export async function readReturnedMail(raw: Buffer): Promise<ReturnedMail> {
  if (raw.length === 0) return { kind: 'Unrecognized', reason: 'an empty message' };
  let parts: ReturnedMailParts;
  try {
    parts = await returnedMailParts(raw);
  } catch (cause) {
    return { kind: 'Unrecognized', reason: `${UNPARSABLE_MIME}: ${messageOf(cause)}` };
  }
  try {
    return returnedMailOf(parts);
  } catch (cause) {
    // A fault of ours, not of the message: said apart so that tests and logs can tell.
    return { kind: 'Unrecognized', reason: `${READING_FAILED}: ${messageOf(cause)}` };
  }
}

/** The start of the reason of a message whose MIME postal-mime refused (over a limit, or broken past reading). */
export const UNPARSABLE_MIME = 'the message cannot be parsed';
/** The start of the reason of a message the domain failed to read: never expected, a bug. */
export const READING_FAILED = 'the message could not be read';

/** The parts of a returned message the domain reads (exported for tests). Rejects on MIME it cannot parse. */
export async function returnedMailParts(raw: Buffer): Promise<ReturnedMailParts> {
  const bytes = raw.subarray(0, RETURNED_MAIL_LIMITS.maxBytes);
  if (delimiterLines(bytes) > RETURNED_MAIL_LIMITS.maxDelimiterLines) {
    throw new Error(`more than ${RETURNED_MAIL_LIMITS.maxDelimiterLines} lines that may delimit MIME parts`);
  }
  const email = await parseMime(bytes);
  const headers = headersOf(email);
  const reportType = reportTypeOf(headers);
  const deliveryStatus = firstPart(email, DELIVERY_STATUS_TYPES);
  const feedbackReport = firstPart(email, FEEDBACK_REPORT_TYPES);
  const originalPart = firstPart(email, ORIGINAL_TYPES);
  const text = textOf(email);
  const originalBytes = originalPart ? bytesOf(originalPart) : text === undefined ? undefined : proseCopyBytes(text);
  const originalHeaders = originalBytes === undefined ? undefined : await headersOfOriginal(originalBytes);
  return {
    headers,
    ...(reportType !== undefined && { reportType }),
    ...(deliveryStatus && { deliveryStatus: utf8.decode(bytesOf(deliveryStatus)) }),
    ...(feedbackReport && { feedbackReport: utf8.decode(bytesOf(feedbackReport)) }),
    ...(originalHeaders !== undefined && { originalHeaders }),
    ...(text !== undefined && { text }),
  };
}

/** How many lines start with `--`, up to one more than the limit. */
function delimiterLines(bytes: Uint8Array): number {
  let count = 0;
  for (let i = 0; i + 1 < bytes.length && count <= RETURNED_MAIL_LIMITS.maxDelimiterLines; i++) {
    if (bytes[i] === 0x2d && bytes[i + 1] === 0x2d && (i === 0 || bytes[i - 1] === 0x0a || bytes[i - 1] === 0x0d)) {
      count++;
    }
  }
  return count;
}

function parseMime(bytes: Uint8Array): Promise<Email> {
  return PostalMime.parse(bytes, {
    forceRfc822Attachments: true,
    attachmentEncoding: 'arraybuffer',
    maxNestingDepth: RETURNED_MAIL_LIMITS.maxNestingDepth,
    maxHeadersSize: RETURNED_MAIL_LIMITS.maxHeaderBytes,
  });
}

function headersOf(email: Email): MessageHeader[] {
  return email.headers
    .slice(0, RETURNED_MAIL_LIMITS.maxHeaderFields)
    .map((header) => ({ name: header.key, value: decodedHeader(header.value) }));
}

function decodedHeader(value: string): string {
  try {
    return decodeWords(value);
  } catch {
    return value;
  }
}

function reportTypeOf(headers: readonly MessageHeader[]): string | undefined {
  const contentType = headers.find((header) => header.name === 'content-type')?.value ?? '';
  if (!/^\s*multipart\/report\b/i.test(contentType)) return undefined;
  return /;\s*report-type\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]?.toLowerCase();
}

function firstPart(email: Email, types: ReadonlySet<string>): Attachment | undefined {
  return email.attachments.find((attachment) => types.has(attachment.mimeType));
}

function bytesOf(attachment: Attachment): Uint8Array {
  const { content } = attachment;
  if (typeof content === 'string') return Buffer.from(content, attachment.encoding === 'base64' ? 'base64' : 'utf8');
  return content instanceof Uint8Array ? content : new Uint8Array(content);
}

/** The text of the message: its text/plain parts, else the text of its HTML, at most maxTextChars. */
function textOf(email: Email): string | undefined {
  const text = email.text ?? (email.html === undefined ? undefined : textOfHtml(email.html));
  return text?.slice(0, RETURNED_MAIL_LIMITS.maxTextChars);
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

const LINE_BREAKING_TAGS = /^<\/?(?:br|p|div|tr|li|h\d|table)\b/i;
const HIDDEN_ELEMENTS = /^<(style|script|head)\b/i;

/**
 * HTML as lines of text, enough to find a recipient and a status code in (Office 365's NDR is HTML): tags dropped
 * (line-breaking ones become a line break, style/script/head with their content), entities decoded. One pass, linear
 * in the input: a `<` without a `>` after it is text.
 */
export function textOfHtml(html: string): string {
  const source = html.slice(0, RETURNED_MAIL_LIMITS.maxTextChars);
  const lower = source.toLowerCase();
  let out = '';
  let at = 0;
  while (at < source.length) {
    const open = source.indexOf('<', at);
    if (open < 0) break;
    const close = source.indexOf('>', open);
    if (close < 0) break;
    out += source.slice(at, open);
    const tag = source.slice(open, close + 1);
    at = close + 1;
    const hidden = HIDDEN_ELEMENTS.exec(tag)?.[1]?.toLowerCase();
    if (hidden !== undefined) {
      const end = lower.indexOf(`</${hidden}`, at);
      const endClose = end < 0 ? -1 : source.indexOf('>', end);
      at = endClose < 0 ? source.length : endClose + 1;
    } else if (LINE_BREAKING_TAGS.test(tag)) {
      out += '\n';
    }
  }
  out += source.slice(at);
  return out.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,8});/gi, (entity, name: string) => {
    if (name[0] !== '#') return ENTITIES[name.toLowerCase()] ?? entity;
    const codePoint = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
    return codePoint > 0 && codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : entity;
  });
}

function proseCopyBytes(text: string): Uint8Array | undefined {
  const copy = originalCopyInProse(text);
  return copy === undefined ? undefined : Buffer.from(copy, 'utf8');
}

/**
 * The header fields of an original message (its header block, up to the first blank line); undefined when they
 * cannot be parsed (the report is still read, without its original).
 */
async function headersOfOriginal(bytes: Uint8Array): Promise<MessageHeader[] | undefined> {
  let start = 0;
  while (start < bytes.length && (bytes[start] === 0x0d || bytes[start] === 0x0a)) start++;
  const window = Buffer.from(bytes.buffer, bytes.byteOffset + start, bytes.length - start).subarray(
    0,
    RETURNED_MAIL_LIMITS.maxOriginalHeaderBytes,
  );
  const end = headerBlockEnd(window);
  try {
    return headersOf(await parseMime(Buffer.concat([window.subarray(0, end), Buffer.from('\r\n\r\n')])));
  } catch {
    return undefined;
  }
}

function headerBlockEnd(bytes: Buffer): number {
  const crlf = bytes.indexOf('\r\n\r\n');
  const lf = bytes.indexOf('\n\n');
  const ends = [crlf, lf].filter((index) => index >= 0);
  return ends.length > 0 ? Math.min(...ends) : bytes.length;
}

function messageOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}
