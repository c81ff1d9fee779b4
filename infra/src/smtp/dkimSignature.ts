import { createHash, webcrypto, type KeyObject } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { foldLines } from 'nodemailer/lib/mime-funcs';
import { InfrastructureError } from '../errors';
import type { DkimSigningKey } from './compose';

/**
 * The DKIM-Signature (RFC 6376; rsa-sha256, relaxed/relaxed) of a composed message, computed in one pass over its
 * bytes. The header it writes is the one nodemailer's DKIM signer writes, byte for byte (the same fields signed, in
 * the same order, folded the same way; RSA signatures are deterministic, so the bytes compare equal:
 * infra/test/unit/dkimSignature.test.ts holds it to that). nodemailer's signer is a chain of four streams and three
 * event-loop turns a message; the sender signs a whole message it already holds, and that chain cost it about 0.4 ms
 * a message beside the RSA signature itself (bench/machine.ts measures both).
 *
 * The RSA signature, most of the cost (1-2 ms a message on the reference machine), is made by WebCrypto, on libuv's
 * thread pool: the event loop goes on meanwhile (a 250's guard, another transaction's reply), and the signatures of
 * a run's messages are made side by side, on every core. */

/** The fields signed when present (RFC 4871 §5.5's list, nodemailer's default), in this order. */
const SIGNED_FIELDS = [
  'from',
  'sender',
  'reply-to',
  'subject',
  'date',
  'message-id',
  'to',
  'cc',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'content-id',
  'content-description',
  'resent-date',
  'resent-from',
  'resent-sender',
  'resent-to',
  'resent-cc',
  'resent-message-id',
  'in-reply-to',
  'references',
  'list-id',
  'list-help',
  'list-unsubscribe',
  'list-subscribe',
  'list-post',
  'list-owner',
  'list-archive',
  'otp-token',
];

/** Relaxed header canonicalization (RFC 6376 §3.4.2) of a field's value: unfolded, each run of WSP one SP, trimmed. */
function relaxedValue(field: string): string {
  return field
    .slice(field.indexOf(':') + 1)
    .replace(/\r?\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ | $/g, '');
}

/** Where the header ends: after the first empty line (CRLF or LF), or the whole message when there is none. */
function headerEnd(text: string): number {
  const blank = text.search(/\n\r?\n/);
  return blank < 0 ? text.length : text.indexOf('\n', blank + 1) + 1;
}

/** Each header field, unfolded (a line starting with SP or HTAB continues the one before), by its lower-case name; the last one of a name wins. */
function lastFieldByName(header: string): Map<string, string> {
  const fields: string[] = [];
  for (const line of header.split(/\r?\n/)) {
    if (fields.length > 0 && /^[ \t]/.test(line)) fields[fields.length - 1] += `\n${line}`;
    else fields.push(line);
  }
  const byName = new Map<string, string>();
  for (const field of fields) {
    if (!/[^ \t\r]/.test(field)) continue;
    byName.set(
      field
        .slice(0, field.indexOf(':'))
        .replace(/^[ \t]+|[ \t]+$/g, '')
        .toLowerCase(),
      field,
    );
  }
  return byName;
}

/**
 * The relaxed body hash (RFC 6376 §3.4.4): each run of WSP one SP, WSP at the ends of lines dropped, empty lines at
 * the end dropped, every line ended with CRLF (a bare LF ends a line too; a CR not before LF is content).
 */
function relaxedBodyHash(body: string): string {
  const lines = body.split(/\r?\n/).map((line) => line.replace(/[ \t]+/g, ' ').replace(/ $/, ''));
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const canonical = lines.length > 0 ? `${lines.join('\r\n')}\r\n` : '';
  return createHash('sha256').update(canonical, 'latin1').digest('base64');
}

/** A tag value as nodemailer writes it: without control characters and the tag list's own delimiters. */
const tagValue = (value: string) => value.replace(/[\x00-\x1f\x7f;=]/g, ''); // eslint-disable-line no-control-regex

/** Each key's WebCrypto form, made once (a DkimSigningKey lives in DkimKeys' cache for a minute). */
const cryptoKeys = new WeakMap<KeyObject, Promise<webcrypto.CryptoKey>>();

function cryptoKeyOf(privateKey: KeyObject): Promise<webcrypto.CryptoKey> {
  let key = cryptoKeys.get(privateKey);
  if (!key) {
    if (privateKey.asymmetricKeyType !== 'rsa') {
      return Promise.reject(
        new Error(`an rsa-sha256 signature needs an RSA key, not ${privateKey.asymmetricKeyType ?? 'this one'}`),
      );
    }
    const der = privateKey.export({ type: 'pkcs8', format: 'der' });
    key = webcrypto.subtle.importKey('pkcs8', der, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign']);
    cryptoKeys.set(privateKey, key);
  }
  return key;
}

/** `raw` with a DKIM-Signature header field in front, signed with the domain's key. */
export async function signMessage(raw: Buffer, key: DkimSigningKey): Promise<Buffer> {
  // One character a byte: the signature covers the bytes as they are, whatever their encoding.
  const text = raw.toString('latin1');
  const end = headerEnd(text);
  const fields = lastFieldByName(text.slice(0, end));
  const signed = SIGNED_FIELDS.filter((name) => fields.has(name));
  const tags = [
    'v=1',
    'a=rsa-sha256',
    'c=relaxed/relaxed',
    `d=${domainToASCII(tagValue(key.domainName)) || tagValue(key.domainName).toLowerCase()}`,
    'q=dns/txt',
    `s=${tagValue(key.keySelector)}`,
    `bh=${relaxedBodyHash(text.slice(end))}`,
    `h=${signed.join(':')}`,
  ];
  const unsigned = `${foldLines(`DKIM-Signature: ${tags.join('; ')}`, 76)};\r\n b=`;
  const canonical =
    signed.map((name) => `${name}:${relaxedValue(fields.get(name)!)}\r\n`).join('') +
    `dkim-signature:${relaxedValue(unsigned)}`;
  let signature: string;
  try {
    const cryptoKey = await cryptoKeyOf(key.privateKey);
    const bytes = await webcrypto.subtle.sign('RSASSA-PKCS1-v1_5', cryptoKey, Buffer.from(canonical, 'latin1'));
    signature = Buffer.from(bytes).toString('base64');
  } catch (cause) {
    throw new InfrastructureError('DkimSigningFailed', `DKIM signing for ${key.domainName} failed: ${String(cause)}`, {
      retriable: false,
      cause,
    });
  }
  // b= folded as nodemailer folds it: 73 characters on the first line, 75 on each after.
  const field = unsigned + signature.replace(/(^.{73}|.{75}(?!\r?\n|\r))/g, '$&\r\n ').trim();
  return Buffer.concat([Buffer.from(`${field}\r\n`, 'latin1'), raw]);
}
