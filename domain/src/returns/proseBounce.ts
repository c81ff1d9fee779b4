import type { MessageHeader } from '../validation/outboundMessage';
import { addressesInText, collapse, headerValue } from './fields';
import type { ReportedAction, ReportedRecipient } from './types';

/**
 * A bounce written in prose, without a message/delivery-status part: qmail, Exim without DSN, older Exchange,
 * sendmail, and the text part of any report whose machine-readable part is missing. Read only from a message that
 * looks like a bounce (`looksLikeBounce`), and only where both a recipient and a status code can be found.
 *
 * 1. The text is cut where the copy of the original message starts ("--- Below this line is a copy of the
 *    message.", "------ This is a copy of the message…", "Original message headers:", …): what the original says
 *    is not the bounce's.
 * 2. A line names a recipient when it is led by an address, alone or followed by `:` or a parenthesis (Postfix and
 *    qmail `<bob@example.org>:`, Exim's indented `bob@example.org`, Exchange's `bob@example.org (bob@example.org)`),
 *    or when it says "delivered to / delivery to / message to / recipient: {address}" (Gmail, Office 365).
 *    Our own addresses (the bounce's To and From) and mailer-daemon / postmaster are never recipients.
 * 3. The recipient's status is the first code in the lines from there to the next recipient (at most
 *    MAX_SEGMENT_LINES): an SMTP reply with its enhanced code (`550 5.1.1 …`, `550-5.1.1 …`), a basic code where a
 *    reply is quoted (at a line's start, after "said:", "returned '", "<<<", …), or an enhanced code alone
 *    (qmail's `(#5.1.1)`). When only one recipient is named, the first code anywhere after it counts.
 * 4. Its action: `failed` for a 5 class; for a 4 class, `delayed` when the bounce speaks of a delay ("delayed",
 *    "will retry", "still trying", …) and `failed` otherwise (a server that gave up after retrying, e.g. qmail's
 *    "I'm not going to try again").
 * The diagnostic code is the quoted reply, from its code to the end of its line and the deeper indented lines after
 * it (at most 500 characters).
 */

/** At most this much prose is read: a bounce's explanation is a few kilobytes. */
const MAX_PROSE_CHARS = 64 * 1024;
const MAX_SEGMENT_LINES = 25;
const MAX_DIAGNOSTIC_CHARS = 500;

/** What a line of dashes says where the copy of the original message starts. */
const COPY_MARKER_WORDS = [
  'copy of (?:the|your) message',
  'original message',
  'returned message',
  'header of the original',
  'undelivered message',
];
/** A line that starts the copy of the original message (tested only on lines of at most MAX_MARKER_LINE_CHARS). */
const ORIGINAL_COPY = new RegExp(
  [
    String.raw`^[ \t]*-{2,}[^\n]{0,120}\b(?:${COPY_MARKER_WORDS.join('|')})\b`,
    String.raw`^[ \t]*original message headers:?[ \t]*$`,
    String.raw`^[ \t]*below this line is a copy of the message`,
  ].join('|'),
  'i',
);
const MAX_MARKER_LINE_CHARS = 200;
/** Longer lines are not read for a recipient: an address line is short. */
const MAX_ANCHOR_LINE_CHARS = 1000;

const ADDRESS = String.raw`[^\s<>()[\],;:"'@]+@[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?`;
/** A line led by an address (bracketed or not, after a bullet), then nothing, `:`, `(…)` or `<mailto:…>`. */
const LEADING_ADDRESS = new RegExp(
  String.raw`^[ \t]*(?:[*•>-][ \t]*)?<?(${ADDRESS})>?[ \t]*(?:$|:|\(|<mailto:|\[mailto:)`,
  'i',
);
/** A sentence naming the recipient. */
const NAMED_RECIPIENT = new RegExp(
  String.raw`\b(?:delivered to|delivery to|message to|deliver it to|recipient(?: address)?:)[ \t]*<?(${ADDRESS})>?`,
  'i',
);

const REPLY_WITH_ENHANCED = /(?:^|[\s:'"([>])([245]\d\d)[ -]#?([245]\.\d{1,3}\.\d{1,3})(?=$|[\s,;:)\]'"]|\.(?!\d))/m;
/** A basic code where a reply is quoted: at a line's start, after "said:", "returned '", "<<<", a colon or quote. */
const QUOTED_REPLY = new RegExp(
  [
    String.raw`(?:^[ \t>]*|\b(?:said|returned|was|error):?[ \t]+'?|<<<[ \t]*|[:'"][ \t]*)`,
    String.raw`([45]\d\d)(?=[ -][^\s\d]|[ \t]*$)`,
  ].join(''),
  'im',
);
const ENHANCED_ALONE = /(?:^|[\s(#'"[:])#?([45]\.\d{1,3}\.\d{1,3})(?=$|[\s,;:)\]'"]|\.(?!\d))/m;

const DELAY_WORDS = new RegExp(
  String.raw`\b(?:${[
    'delayed',
    'delay',
    'warning only',
    'not yet been delivered',
    'still (?:trying|undelivered|being retried)',
    'will (?:retry|continue trying|keep trying|try again)',
    'retrying',
  ].join('|')})\b`,
  'i',
);

const BOUNCE_SENDER =
  /\b(?:mailer-daemon|postmaster)@|mail delivery (?:system|subsystem)|\bmicrosoftexchange[0-9a-f]*@/i;
/** Postfix, Exim, qmail, Gmail, Exchange (English, German, French, Spanish) and the other usual bounce subjects. */
const BOUNCE_SUBJECT = new RegExp(
  [
    'undeliver',
    'delivery (?:status notification|failure|failed|has failed|problem|notification)',
    'mail delivery failed',
    'returned mail',
    'failure notice',
    'non-?delivery',
    "could(?: not|n't) be delivered",
    'message not delivered',
    'unzustellbar',
    'nicht zustellbar',
    'non remis',
    'no se pudo entregar',
  ].join('|'),
  'i',
);
const NOT_A_RECIPIENT = /^(?:mailer-daemon|postmaster)@/i;

/**
 * Whether a message presents itself as a bounce: a multipart/report of report-type delivery-status, a From of
 * mailer-daemon, postmaster, "Mail Delivery System/Subsystem" or Exchange's system mailbox, or a subject such as
 * "Undelivered Mail Returned to Sender", "Delivery Status Notification (Failure)", "Mail delivery failed", "failure
 * notice", "Undeliverable: …". An empty Return-Path is no sign: automatic replies are sent with one too (RFC 3834
 * §3.3).
 */
export function looksLikeBounce(headers: readonly MessageHeader[], reportType?: string): boolean {
  if (reportType === 'delivery-status' || reportType === 'global-delivery-status') return true;
  const from = headerValue(headers, 'from');
  if (from !== undefined && BOUNCE_SENDER.test(from)) return true;
  const subject = headerValue(headers, 'subject');
  return subject !== undefined && BOUNCE_SUBJECT.test(subject);
}

interface FoundCode {
  basic?: number;
  enhanced?: string;
  /** Where the code starts in the searched text. */
  index: number;
}

function findCode(text: string): FoundCode | undefined {
  const start = (match: RegExpExecArray, group: string) => match.index + match[0].lastIndexOf(group);
  const candidates: FoundCode[] = [];
  const full = REPLY_WITH_ENHANCED.exec(text);
  if (full) candidates.push({ basic: Number(full[1]), enhanced: full[2]!, index: start(full, full[1]!) });
  const basic = QUOTED_REPLY.exec(text);
  if (basic) candidates.push({ basic: Number(basic[1]), index: start(basic, basic[1]!) });
  const enhanced = ENHANCED_ALONE.exec(text);
  if (enhanced) candidates.push({ enhanced: enhanced[1]!, index: start(enhanced, enhanced[1]!) });
  // The first code in the text; a reply found whole (`550 5.1.1`) before its basic code found alone.
  candidates.sort((a, b) => a.index - b.index || Number(b.enhanced !== undefined) - Number(a.enhanced !== undefined));
  return candidates[0];
}

/**
 * The quoted reply: from its code (the start of its line for an enhanced code alone) to the end of its line, with
 * the lines after it that are indented deeper (a reply folded over lines, as Postfix writes it), on one line.
 */
function diagnosticFrom(text: string, code: FoundCode): string {
  const lineStart = text.lastIndexOf('\n', code.index - 1) + 1;
  const lines = text.slice(code.basic === undefined ? lineStart : code.index).split('\n');
  const indent = (line: string) => /^[ \t]*/.exec(line)![0].length;
  const codeIndent = indent(text.slice(lineStart, code.index + 1));
  let end = 1;
  while (end < lines.length && lines[end]!.trim() !== '' && indent(lines[end]!) > codeIndent) end++;
  return collapse(lines.slice(0, end).join(' ')).replace(/'$/, '').slice(0, MAX_DIAGNOSTIC_CHARS);
}

function recipientNamedBy(line: string): string | undefined {
  return (LEADING_ADDRESS.exec(line) ?? NAMED_RECIPIENT.exec(line))?.[1];
}

/** The index of the line that starts the copy of the original message, or -1. */
function originalCopyLine(lines: readonly string[]): number {
  return lines.findIndex((line) => line.length <= MAX_MARKER_LINE_CHARS && ORIGINAL_COPY.test(line));
}

/** The text before the copy of the original message, at most MAX_PROSE_CHARS of it, as lines. */
function proseLines(text: string): string[] {
  const lines = text.slice(0, MAX_PROSE_CHARS).split(/\r\n|\r|\n/);
  const copy = originalCopyLine(lines);
  return copy < 0 ? lines : lines.slice(0, copy);
}

/**
 * The copy of the original message a prose bounce quotes after its marker line (qmail's "--- Below this line is a
 * copy of the message.", Exim's "------ This is a copy of the message, including all the headers. ------"), from its
 * first non-blank line; undefined when there is none in the first MAX_PROSE_CHARS.
 */
export function originalCopyInProse(text: string): string | undefined {
  const lines = text.slice(0, MAX_PROSE_CHARS).split(/\r\n|\r|\n/);
  const copy = originalCopyLine(lines);
  if (copy < 0) return undefined;
  const after = lines.slice(copy + 1);
  const first = after.findIndex((line) => line.trim() !== '');
  return first < 0 ? undefined : after.slice(first).join('\r\n');
}

/**
 * The recipients a bounce's prose names with a status code, in their order, each once (the first code found for
 * it). `ownAddresses` are the bounce's own To and From, never recipients. Empty when none can be found.
 */
export function readProseBounce(
  text: string,
  options: { subject?: string; ownAddresses?: readonly string[] } = {},
): ReportedRecipient[] {
  const lines = proseLines(text);
  const own = new Set((options.ownAddresses ?? []).map((address) => address.toLowerCase()));
  const anchors: { address: string; line: number }[] = [];
  lines.forEach((line, index) => {
    const address = line.length <= MAX_ANCHOR_LINE_CHARS ? recipientNamedBy(line) : undefined;
    if (address === undefined || own.has(address.toLowerCase()) || NOT_A_RECIPIENT.test(address)) return;
    const previous = anchors[anchors.length - 1];
    // The same address named again right after (Office 365: "Your message to bob…", then "bob@…") continues.
    if (previous?.address.toLowerCase() !== address.toLowerCase()) anchors.push({ address, line: index });
  });
  const distinct = new Set(anchors.map((anchor) => anchor.address.toLowerCase()));
  const delay = DELAY_WORDS.test(options.subject ?? '') || lines.some((line) => DELAY_WORDS.test(line));
  const found = new Map<string, ReportedRecipient>();
  anchors.forEach((anchor, k) => {
    const key = anchor.address.toLowerCase();
    if (found.has(key)) return;
    const next = anchors[k + 1]?.line ?? lines.length;
    const end = distinct.size === 1 ? lines.length : Math.min(next, anchor.line + MAX_SEGMENT_LINES);
    // The recipient's own address is taken out before searching for a code (`450-sales@example.org`).
    const segment = lines.slice(anchor.line, end).join('\n').replace(anchor.address, ' ');
    const code = findCode(segment);
    if (!code) return;
    const recipient = recipientOf(anchor.address, code, diagnosticFrom(segment, code), delay);
    if (recipient) found.set(key, recipient);
  });
  return [...found.values()];
}

function recipientOf(
  address: string,
  code: FoundCode,
  diagnostic: string,
  delay: boolean,
): ReportedRecipient | undefined {
  const codeClass = code.basic !== undefined ? Math.floor(code.basic / 100) : Number(code.enhanced?.[0]);
  let action: ReportedAction;
  if (codeClass === 5) action = 'failed';
  else if (codeClass === 4) action = delay ? 'delayed' : 'failed';
  else return undefined;
  const status = code.enhanced?.split('.').map(Number).join('.');
  return {
    finalRecipient: address,
    action,
    ...(status !== undefined && { status }),
    ...(diagnostic !== '' && { diagnosticCode: diagnostic }),
  };
}

/** The addresses of a message's own To and From: a bounce's, which are ours and the reporting system's. */
export function ownAddressesOf(headers: readonly MessageHeader[]): string[] {
  return ['to', 'from', 'delivered-to'].flatMap((name) => addressesInText(headerValue(headers, name) ?? ''));
}
