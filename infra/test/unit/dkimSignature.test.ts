import { generateKeyPairSync } from 'node:crypto';
import DKIM from 'nodemailer/lib/dkim';
import { beforeAll, describe, expect, it } from 'vitest';
import { composeMessage, dkimSigningKey, type DkimSigningKey } from '../../src/smtp/compose';
import { checkDkim } from '../../src/smtp/dkimCheck';
import { dkimRecordsFromMap, dkimRecordValue } from '../../src/smtp/dkimRecords';
import { signMessage } from '../../src/smtp/dkimSignature';
import { acceptedMessage as accepted, messageShapes } from './acceptedMessage';

/**
 * The sender's DKIM signature: what a receiving server checks (mailauth's verifier, as the test mail server runs it,
 * says pass, and fail once the message is changed), and the very header nodemailer's DKIM signer writes for the same
 * message and key (RSA PKCS#1 v1.5 signatures are deterministic, so the two compare byte for byte), for composed
 * messages of every shape and for raw messages that exercise each rule of the relaxed canonicalization.
 */

let keyPem: string;
let publicPem: string;
const signingKey = (domainName = 'shop.example.test', keySelector = 'sl1'): DkimSigningKey =>
  dkimSigningKey(domainName, keySelector, keyPem);

beforeAll(() => {
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  keyPem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  publicPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
});

async function nodemailerSigned(raw: Buffer, key: DkimSigningKey): Promise<Buffer> {
  const signer = new DKIM({ domainName: key.domainName, keySelector: key.keySelector, privateKey: keyPem });
  const chunks: Buffer[] = [];
  for await (const chunk of signer.sign(raw)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const verdict = (raw: Buffer, domain = 'shop.example.test', selector = 'sl1') =>
  checkDkim(raw, dkimRecordsFromMap({ [`${selector}._domainkey.${domain}`]: dkimRecordValue(publicPem) }));

/** Raw messages for the canonicalization's corners (composed messages never have most of them). */
const raws: [string, string][] = [
  [
    'folded headers, WSP around the colon and runs of WSP in values',
    'From: Shop <orders@shop.example.test>\r\nSubject : Your\t  receipt \r\n  continued\there \r\nTo:\tann@example.net\r\n\r\nBody\r\n',
  ],
  [
    'a repeated header (the last one is signed) and unsigned headers',
    'Subject: first\r\nSubject: second\r\nX-Other: yes\r\nFrom: orders@shop.example.test\r\n\r\nBody\r\n',
  ],
  [
    'WSP at the ends of body lines, runs of WSP inside them, empty lines at the end',
    'From: orders@shop.example.test\r\nSubject: s\r\n\r\nline one  \t \r\n a  b\t\tc \r\n\r\n\r\n\r\n',
  ],
  [
    'bare LF line ends and a body without a last line break',
    'From: orders@shop.example.test\nSubject: s\n\nfirst\nsecond',
  ],
  [
    'a lone CR inside a line and CR CR LF',
    'From: orders@shop.example.test\r\nSubject: s\r\n\r\nbefore\rafter \r\r\nnext\r\n',
  ],
  ['an empty body', 'From: orders@shop.example.test\r\nSubject: s\r\n\r\n'],
  ['no body at all (no empty line)', 'From: orders@shop.example.test\r\nSubject: s\r\n'],
  [
    '8-bit bytes in headers and body',
    'From: orders@shop.example.test\r\nSubject: Caf\xe9 \xff\r\n\r\nna\xefve \x80\r\n',
  ],
];

describe('signMessage (DKIM, rsa-sha256, relaxed/relaxed)', () => {
  for (const [shape, overrides] of messageShapes) {
    it(`signs ${shape}: mailauth verifies it, and the header is nodemailer's`, async () => {
      const raw = await composeMessage(accepted(overrides));
      const key = signingKey();
      const signed = await signMessage(raw, key);

      expect(signed.subarray(signed.length - raw.length).equals(raw)).toBe(true);
      expect(signed.toString('latin1')).toBe((await nodemailerSigned(raw, key)).toString('latin1'));
      expect(await verdict(signed)).toMatchObject({ result: 'pass', domain: 'shop.example.test', selector: 'sl1' });
    });
  }

  for (const [shape, text] of raws) {
    it(`signs a message with ${shape} as nodemailer does`, async () => {
      const raw = Buffer.from(text, 'latin1');
      const key = signingKey();
      expect((await signMessage(raw, key)).toString('latin1')).toBe(
        (await nodemailerSigned(raw, key)).toString('latin1'),
      );
      // A message without the empty line is no message a receiver checks (mailauth: none); the rest pass.
      if (text.includes('\n\n') || text.includes('\n\r\n')) {
        expect((await verdict(await signMessage(raw, key))).result).toBe('pass');
      }
    });
  }

  it('writes the domain as its A-label (an internationalized domain), and the selector as given', async () => {
    const raw = await composeMessage(accepted({ from: { email: 'orders@bücher.example' } }));
    const key = signingKey('Bücher.example', 'sel-2026');
    const signed = await signMessage(raw, key);
    expect(signed.toString('latin1')).toBe((await nodemailerSigned(raw, key)).toString('latin1'));
    expect(signed.toString('latin1')).toMatch(/ d=xn--bcher-kva\.example; /);
    expect(await verdict(signed, 'xn--bcher-kva.example', 'sel-2026')).toMatchObject({ result: 'pass' });
  });

  it('fails the check when the body or a signed header is changed after signing', async () => {
    const signed = (await signMessage(await composeMessage(accepted()), signingKey())).toString('latin1');
    const body = Buffer.from(signed.replace('Thanks for your order.', 'Thanks for your order!'), 'latin1');
    const subject = Buffer.from(signed.replace('Subject: Your receipt', 'Subject: Your refund'), 'latin1');
    // mailauth's words for a body hash that does not match: neutral, "body hash did not verify".
    expect(await verdict(body)).toMatchObject({ result: 'neutral', comment: expect.stringMatching(/body hash/) });
    expect((await verdict(subject)).result).toBe('fail');
  });

  it('refuses to sign with a key that is not an RSA private key, non-retriable', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key = { ...signingKey(), privateKey };
    await expect(signMessage(Buffer.from('From: a@b.test\r\n\r\nx\r\n'), key)).rejects.toThrow(
      expect.objectContaining({ code: 'DkimSigningFailed', retriable: false }),
    );
  });
});
