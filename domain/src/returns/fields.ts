import type { MessageHeader } from '../validation/outboundMessage';

/**
 * Header blocks as reports write them: RFC 3464's delivery-status (per-message fields, then one block of fields per
 * recipient, blocks separated by blank lines) and RFC 5965's feedback report (one block) share RFC 5322's syntax.
 * Read here without a library:
 * - a line `Name: value` starts a field; a line starting with a space or tab continues the one before (folding);
 * - a blank line (or one of only spaces) ends a block;
 * - names are matched case-insensitively (kept lowercased); values are unfolded, runs of white space become one space;
 * - a line that is neither (noise, a truncated part) is skipped.
 *
 * Comments (`(...)`, nested, with `\` escapes, not inside quotes) are removed only where a field's syntax allows
 * them and its meaning is a token (`stripComments`): `Status: 5.0.0 (permanent failure)`. Free text such as a
 * Diagnostic-Code keeps its parentheses.
 */

/** One field of a block: its name lowercased, its value unfolded and trimmed. */
export interface ReportField {
  name: string;
  value: string;
}

/** At most this many characters of a block text are read: a report is a few hundred bytes per recipient. */
export const MAX_FIELD_TEXT_CHARS = 1024 * 1024;

const FIELD_LINE = /^([!-9;-~]+)[ \t]*:(.*)$/;
const CONTINUATION = /^[ \t]/;
const BLANK = /^[ \t]*$/;

/** The blocks of a header-block text, each a list of fields in their order. Empty blocks are left out. */
export function parseFieldBlocks(text: string): ReportField[][] {
  const blocks: ReportField[][] = [];
  let block: ReportField[] = [];
  let current: { name: string; parts: string[] } | undefined;
  const endField = () => {
    if (current) block.push({ name: current.name, value: collapse(current.parts.join(' ')) });
    current = undefined;
  };
  const endBlock = () => {
    endField();
    if (block.length > 0) blocks.push(block);
    block = [];
  };
  for (const line of text.slice(0, MAX_FIELD_TEXT_CHARS).split(/\r\n|\r|\n/)) {
    if (BLANK.test(line)) {
      endBlock();
      continue;
    }
    if (CONTINUATION.test(line)) {
      current?.parts.push(line);
      continue;
    }
    endField();
    const match = FIELD_LINE.exec(line);
    if (match) current = { name: match[1]!.toLowerCase(), parts: [match[2]!] };
  }
  endBlock();
  return blocks;
}

/** The most characters of a header value kept for showing (RFC 5322's line limit): a subject can be folded forever. */
export const MAX_SHOWN_HEADER_CHARS = 998;

/** A header value to show: unfolded, trimmed, at most MAX_SHOWN_HEADER_CHARS; undefined when empty or absent. */
export function shownHeader(value: string | undefined): string | undefined {
  const shown =
    value === undefined
      ? ''
      : collapse(value.slice(0, MAX_SHOWN_HEADER_CHARS * 4))
          .slice(0, MAX_SHOWN_HEADER_CHARS)
          .trimEnd();
  return shown === '' ? undefined : shown;
}

/** Runs of white space (folding included) as one space, trimmed. */
export function collapse(value: string): string {
  return value.replace(/\s+/g, ' ').trim();
}

/** The value without its RFC 5322 comments (parentheses outside quoted strings, nested, with `\` escapes). */
export function stripComments(value: string): string {
  let out = '';
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const char = value[i]!;
    if (char === '\\') {
      if (depth === 0) out += value.slice(i, i + 2);
      i++;
      continue;
    }
    if (quoted) {
      if (char === '"') quoted = false;
      out += char;
    } else if (char === '(') {
      depth++;
    } else if (char === ')' && depth > 0) {
      depth--;
    } else if (depth === 0) {
      if (char === '"') quoted = true;
      out += char;
    }
  }
  return collapse(out);
}

const TYPE_ATOM = /^[A-Za-z][A-Za-z0-9.+_-]*$/;

/**
 * A typed value `type; value` (RFC 3464: `rfc822; bob@example.org`, `dns; mx.example.org`, `smtp; 550 ...`): the type
 * lowercased when the text before the first `;` is one word, else no type and the whole value.
 */
export function typedValue(value: string): { type?: string; value: string } {
  const semicolon = value.indexOf(';');
  if (semicolon > 0) {
    const type = value.slice(0, semicolon).trim();
    if (TYPE_ATOM.test(type)) return { type: type.toLowerCase(), value: value.slice(semicolon + 1).trim() };
  }
  return { value: value.trim() };
}

/**
 * The address in an address field (`rfc822; bob@example.org`, `<bob@example.org>`, `utf-8; j\x{f6}rg@example.de`,
 * or a bare address), as written but for its brackets and comments; undefined when there is none.
 */
export function addressOfField(value: string): string | undefined {
  // `rfc822:bob@…` (a colon for the semicolon) is met, even in RFC 3464's own example (A.2).
  const typed = typedValue(stripComments(value).replace(/^(rfc822|utf-8)\s*:/i, '$1;'));
  let address = typed.value;
  const bracketed = /<([^<>]*)>/.exec(address);
  if (bracketed) address = bracketed[1]!;
  if (typed.type === 'utf-8') address = decodeUtf8AddressEscapes(address);
  address = address.trim();
  return address === '' ? undefined : address;
}

/** RFC 6533's `\x{HEX}` escapes in a utf-8 address type, as the characters they stand for. */
function decodeUtf8AddressEscapes(address: string): string {
  return address.replace(/\\x\{([0-9A-Fa-f]{1,6})\}/g, (escape, hex: string) => {
    const codePoint = Number.parseInt(hex, 16);
    return codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : escape;
  });
}

/** The host in an MTA field (`dns; mx.example.org`), without its type and comments. */
export function hostOfField(value: string): string | undefined {
  const host = typedValue(stripComments(value)).value;
  return host === '' ? undefined : host;
}

/** The first value of a header, by name (case-insensitive), trimmed; undefined when absent. */
export function headerValue(headers: readonly MessageHeader[], name: string): string | undefined {
  const wanted = name.toLowerCase();
  return headers.find((header) => header.name.toLowerCase() === wanted)?.value.trim();
}

const ADDRESS_DELIMITERS = /[\s<>()[\],;:"']+/;
/** At most this much of a text is searched for addresses (a To header, a line). */
const MAX_ADDRESS_TEXT_CHARS = 64 * 1024;

/**
 * The addresses written in a text (a To header, a line of prose), in their order, without trailing dots: the words
 * between delimiters that hold one `@`. Split first, then tested, so that the work stays linear in the text.
 */
export function addressesInText(text: string): string[] {
  return text
    .slice(0, MAX_ADDRESS_TEXT_CHARS)
    .split(ADDRESS_DELIMITERS)
    .map(withoutTrailingDots)
    .filter((word) => /^[^@]+@[^@]+$/.test(word));
}

/** The word without the dots that end it (a loop: `/\.+$/` is quadratic on a long run of dots). */
function withoutTrailingDots(word: string): string {
  let end = word.length;
  while (end > 0 && word[end - 1] === '.') end--;
  return word.slice(0, end);
}
