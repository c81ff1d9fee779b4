import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The token in a message's envelope sender (VERP): `MAIL FROM:<b.{token}@{return-path domain}>`, one per recipient.
 * A bounce or a complaint sent back to that address says which message and which recipient it is about without
 * its content being trusted: the token is the message id (16 bytes), the recipient's index among the message's
 * active recipients (1 byte), and the first 10 bytes of an HMAC-SHA-256 of those 17 bytes under a key derived from
 * the service's secret key. A token made up by anyone without the key fails the check.
 *
 * Spelt in RFC 4648 base32, lowercase, without padding (27 bytes → 44 characters): mail servers may change the case
 * of a local part, and base32 reads the same either way. The whole local part, `b.` and 44 characters, is 46 octets,
 * under RFC 5321's 64.
 */

export const RETURN_PATH_PREFIX = 'b.';
/** The most recipients a token can name: one byte of index. */
export const MAX_TOKEN_RECIPIENTS = 256;

const MAC_BYTES = 10;
const TOKEN_BYTES = 16 + 1 + MAC_BYTES;
const TOKEN_CHARS = Math.ceil((TOKEN_BYTES * 8) / 5);
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface ReturnPathTarget {
  messageId: string;
  /** The recipient's index in the message's activeRecipients (MessageAccepted). */
  recipientIndex: number;
}

export type ReturnPathReading =
  ({ ok: true } & ReturnPathTarget) | { ok: false; reason: 'NotAReturnPath' | 'Malformed' | 'BadSignature' };

/** The HMAC key of return-path tokens, derived from the service's secret key (never the secret key itself). */
export function returnPathKey(secretKey: Buffer): Buffer {
  return createHmac('sha256', secretKey).update('sendline return-path token v1').digest();
}

function mac(key: Buffer, body: Buffer): Buffer {
  return createHmac('sha256', key).update(body).digest().subarray(0, MAC_BYTES);
}

function base32(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

function fromBase32(text: string): Buffer | undefined {
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of text) {
    const digit = ALPHABET.indexOf(char);
    if (digit < 0) return undefined;
    value = ((value << 5) | digit) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** The token of one recipient of a message. */
export function returnPathToken(key: Buffer, target: ReturnPathTarget): string {
  const { messageId, recipientIndex } = target;
  if (!UUID.test(messageId)) throw new TypeError(`a return-path token needs a UUID message id, not ${messageId}`);
  if (!Number.isInteger(recipientIndex) || recipientIndex < 0 || recipientIndex >= MAX_TOKEN_RECIPIENTS) {
    throw new RangeError(`a recipient index is 0..${MAX_TOKEN_RECIPIENTS - 1}, not ${recipientIndex}`);
  }
  const body = Buffer.concat([Buffer.from(messageId.replaceAll('-', ''), 'hex'), Buffer.from([recipientIndex])]);
  return base32(Buffer.concat([body, mac(key, body)]));
}

/** The envelope sender of one recipient: `b.{token}@{returnPathDomain}`. */
export function returnPathAddress(key: Buffer, target: ReturnPathTarget, returnPathDomain: string): string {
  return `${RETURN_PATH_PREFIX}${returnPathToken(key, target)}@${returnPathDomain}`;
}

/**
 * Reads the local part of an address mail came back to (`b.{token}`, any case): the message and recipient it names,
 * or why it names none. Only a token this service signed verifies.
 */
export function readReturnPathLocalPart(key: Buffer, localPart: string): ReturnPathReading {
  const lower = localPart.toLowerCase();
  if (!lower.startsWith(RETURN_PATH_PREFIX)) return { ok: false, reason: 'NotAReturnPath' };
  const token = lower.slice(RETURN_PATH_PREFIX.length);
  if (token.length !== TOKEN_CHARS) return { ok: false, reason: 'Malformed' };
  const bytes = fromBase32(token);
  if (!bytes || bytes.length !== TOKEN_BYTES || base32(bytes) !== token) return { ok: false, reason: 'Malformed' };
  const body = bytes.subarray(0, 17);
  if (!timingSafeEqual(mac(key, body), bytes.subarray(17))) return { ok: false, reason: 'BadSignature' };
  const hex = body.subarray(0, 16).toString('hex');
  return {
    ok: true,
    messageId: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
    recipientIndex: body[16]!,
  };
}

/** The same as readReturnPathLocalPart for a whole address (`b.{token}@domain`). */
export function readReturnPathAddress(key: Buffer, address: string): ReturnPathReading {
  const at = address.lastIndexOf('@');
  return readReturnPathLocalPart(key, at < 0 ? address : address.slice(0, at));
}
