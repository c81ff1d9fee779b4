/**
 * Attachment checks: file names, strict base64, MIME types and the file types refused outright.
 */

/**
 * File types refused as attachments, by the extension of the name (case-insensitive; trailing dots and
 * spaces are ignored, as Windows ignores them: "invoice.exe." is an .exe). Postmark's published list of
 * forbidden types (vbs, exe, bin, bat, chm, com, cpl, crt, hlp, hta, inf, ins, isp, jse, lnk, mdb, pcd,
 * pif, reg, scr, sct, shs, vbe, vba, wsf, wsh, wsl, msc, msi, msp, mst) plus other directly executable
 * Windows types (cmd, js, jar, dll, ps1, vb, wsc, ade, adp, mde, shb, scf).
 */
export const FORBIDDEN_ATTACHMENT_EXTENSIONS: ReadonlySet<string> = new Set([
  'ade',
  'adp',
  'bat',
  'bin',
  'chm',
  'cmd',
  'com',
  'cpl',
  'crt',
  'dll',
  'exe',
  'hlp',
  'hta',
  'inf',
  'ins',
  'isp',
  'jar',
  'js',
  'jse',
  'lnk',
  'mdb',
  'mde',
  'msc',
  'msi',
  'msp',
  'mst',
  'pcd',
  'pif',
  'ps1',
  'reg',
  'scf',
  'scr',
  'sct',
  'shb',
  'shs',
  'vb',
  'vba',
  'vbe',
  'vbs',
  'wsc',
  'wsf',
  'wsh',
  'wsl',
]);

/** The lowercased extension of a file name ('' when it has none), ignoring trailing dots and spaces. */
export function fileExtension(name: string): string {
  const trimmed = name.replace(/[. ]+$/, '');
  const dot = trimmed.lastIndexOf('.');
  return dot < 0 ? '' : trimmed.slice(dot + 1).toLowerCase();
}

export function isForbiddenAttachmentName(name: string): boolean {
  return FORBIDDEN_ATTACHMENT_EXTENSIONS.has(fileExtension(name));
}

/**
 * Strict base64 (RFC 4648 §4): the standard alphabet, length a multiple of 4, '=' padding only at the end,
 * no whitespace or line breaks, and no stray bits in the last character before the padding (so every
 * accepted text is the one canonical encoding of its bytes).
 */
export function isStrictBase64(text: string): boolean {
  if (text.length % 4 !== 0) return false;
  if (!/^[A-Za-z0-9+/]*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)) return false;
  if (text.endsWith('==')) return /[AQgw]==$/.test(text);
  if (text.endsWith('=')) return /[AEIMQUYcgkosw048]=$/.test(text);
  return true;
}

/**
 * Base64 as Postmark takes it: strict base64 (above), or RFC 2045's wrapped form of it — lines broken by CRLF, LF
 * or CR (Python's `email` package and most MIME encoders wrap at 76 characters and end with a line break), each
 * line possibly with spaces or tabs around it. The lines joined must be strict base64: a space inside a line, '='
 * before the last line's end, URL-safe characters or missing padding are still refused. Returns the strict,
 * unwrapped text (what the message keeps and what its size is counted from), or undefined when it is not base64.
 */
export function unwrapBase64(text: string): string | undefined {
  if (isStrictBase64(text)) return text;
  const joined = text
    .split(/\r\n|\r|\n/)
    .map((line) => line.replace(/^[ \t]+|[ \t]+$/g, ''))
    .join('');
  return isStrictBase64(joined) ? joined : undefined;
}

/** The number of bytes a (valid, padded) base64 text decodes to. */
export function decodedBase64Length(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return (text.length / 4) * 3 - padding;
}

const TOKEN = "[A-Za-z0-9!#$%&'*+.^_`|~-]+";
const QUOTED = '"(?:[^"\\\\\\r\\n]|\\\\[^\\r\\n])*"';
const MIME_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:\\s*;\\s*${TOKEN}=(?:${TOKEN}|${QUOTED}))*$`);

/** `type/subtype`, optionally with `; name=value` parameters (RFC 2045 tokens or quoted strings). */
export function isMimeType(text: string): boolean {
  return MIME_TYPE.test(text.trim());
}
