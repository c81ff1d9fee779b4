import type MimeNode from 'nodemailer/lib/mime-node';
import { wrap as base64Wrap } from 'nodemailer/lib/base64';
import { encode as qpEncode, wrap as qpWrap } from 'nodemailer/lib/qp';

/**
 * The bytes of a MIME tree as nodemailer's MailComposer compiles it, written at once: the same bytes `node.build()`
 * gives, byte for byte (infra/test/unit/mimeBytes.test.ts holds it to that for messages of every shape).
 *
 * `build()` streams the tree: a PassThrough, an encoder stream and a pipeline for each part, two more for the end of
 * the message and its line breaks, and an event-loop turn between parts. The sender composes a whole message it
 * already holds in memory, and that machinery was most of the cost of composing: a short text message took 0.64 ms
 * of CPU streamed and takes 0.28 ms written at once, in a loop of 3,000 (bench/machine.ts has a compose row). The
 * headers, the transfer encodings and the encoders stay nodemailer's: this only walks the tree the way
 * `MimeNode.stream` does.
 *
 * A tree it does not know how to write at once (content that is a stream, a file or a URL; a quoted-printable part
 * of more than one 64 KiB encoder slice; a part that is not text in quoted-printable) gives undefined, and the caller
 * builds it with nodemailer's stream.
 */

/** The quoted-printable encoder handles its input in slices of this size; one slice is written here, more are not. */
const QP_SLICE = 64 * 1024;
const LINE = 76;

/**
 * A quoted-printable part as nodemailer's encoder stream writes it from one chunk: the whitespace it ends with is
 * encoded after the rest, with the rest's last line carried over.
 */
function quotedPrintable(content: Buffer): string | undefined {
  let end = content.length;
  while (end > 0 && (content[end - 1] === 0x20 || content[end - 1] === 0x09)) end--;
  // The stream holds the ending whitespace back only when it fits one slice; both sides must fit one slice here.
  if (end > QP_SLICE || content.length - end > QP_SLICE) return undefined;
  let written = '';
  let lastLine = '';
  for (const slice of [content.subarray(0, end), content.subarray(end)]) {
    if (slice.length === 0) continue;
    const wrapped = qpWrap(lastLine + qpEncode(slice), LINE);
    const lastBreak = wrapped.lastIndexOf('\n');
    written += wrapped.slice(0, lastBreak + 1);
    lastLine = wrapped.slice(lastBreak + 1);
  }
  return written + lastLine;
}

/** A part's body, encoded as its Content-Transfer-Encoding says; undefined when it cannot be written at once. */
function encodedBody(node: MimeNode, transferEncoding: string): Buffer | undefined {
  const content = node.content;
  if (typeof content !== 'string' && !Buffer.isBuffer(content)) return undefined;
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  if (transferEncoding === 'base64') return Buffer.from(base64Wrap(bytes.toString('base64'), LINE), 'latin1');
  if (transferEncoding === 'quoted-printable') {
    // Outside of text, nodemailer's encoder writes lone CR and LF as data ("binary"): not done here.
    if (!/^text\//i.test(node.contentType ?? '')) return undefined;
    const encoded = quotedPrintable(bytes);
    return encoded === undefined ? undefined : Buffer.from(encoded, 'latin1');
  }
  return bytes;
}

/** What a tree keeps for streaming only: raw parts and stream transforms (MailComposer sets none for our messages). */
interface StreamOnly {
  _raw?: unknown;
  _transforms?: unknown[];
  _processFuncs?: unknown[];
}

function usesStreamOnlyFeatures(node: MimeNode): boolean {
  const internals = node as unknown as StreamOnly;
  return Boolean(internals._raw) || Boolean(internals._transforms?.length) || Boolean(internals._processFuncs?.length);
}

/** Appends a node's bytes as `MimeNode.stream` writes them: headers, content, then each child between boundaries. */
function writeNode(node: MimeNode, out: Buffer[]): boolean {
  if (usesStreamOnlyFeatures(node)) return false;
  const transferEncoding = node.getTransferEncoding();
  out.push(Buffer.from(`${node.buildHeaders()}\r\n\r\n`));
  if (node.content) {
    const body = encodedBody(node, String(transferEncoding));
    if (!body) return false;
    out.push(body);
  }
  // `multipart` and `boundary` are set when the headers are built.
  if (node.multipart) {
    for (const [index, child] of node.childNodes.entries()) {
      out.push(Buffer.from(`${index > 0 ? '\r\n' : ''}--${String(node.boundary)}\r\n`));
      if (!writeNode(child, out)) return false;
    }
    out.push(Buffer.from(`\r\n--${String(node.boundary)}--\r\n`));
  }
  return true;
}

/** Every LF not after a CR made CRLF (nodemailer's `newline: 'win'`). */
function crlfLineBreaks(bytes: Buffer): Buffer {
  const pieces: Buffer[] = [];
  let from = 0;
  for (let at = bytes.indexOf(0x0a); at >= 0; at = bytes.indexOf(0x0a, at + 1)) {
    if (at > 0 && bytes[at - 1] === 0x0d) continue;
    pieces.push(bytes.subarray(from, at), CRLF);
    from = at + 1;
  }
  if (from === 0) return bytes;
  pieces.push(bytes.subarray(from));
  return Buffer.concat(pieces);
}

const CRLF = Buffer.from('\r\n');

/**
 * The message's bytes, as `root.build()` would give them, or undefined when the tree needs nodemailer's stream.
 * Only for a root compiled with `newline: 'win'` (the composer's setting).
 */
export function mimeBytesAtOnce(root: MimeNode): Buffer | undefined {
  if (!['win', 'windows', 'dos', '\r\n'].includes(String(root.newline).toLowerCase())) return undefined;
  const out: Buffer[] = [];
  if (!writeNode(root, out)) return undefined;
  const bytes = Buffer.concat(out);
  // The message ends with a line break (nodemailer's LastNewline).
  const last = bytes[bytes.length - 1];
  const ended = last === 0x0a ? bytes : Buffer.concat([bytes, last === 0x0d ? Buffer.from('\n') : CRLF]);
  return crlfLineBreaks(ended);
}
