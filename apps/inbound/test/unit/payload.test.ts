import { describe, expect, it } from 'vitest';
import { parseInboundMail, type InboundAuthentication } from '@sendline/infra';
import { inboundPayloadOf, MAX_PAYLOAD_BYTES } from '../../src/payload';

const HASH = '0123456789abcdef0123456789abcdef';
const DOMAIN = 'inbound.sendline.dev';
const AUTH: InboundAuthentication = {
  spf: 'pass',
  dkim: 'none',
  dmarc: 'none',
  headers: [{ name: 'Authentication-Results', value: 'mx.test; spf=pass; dkim=none; dmarc=none' }],
};

async function payloadOf(raw: string | Buffer, rawEmailEnabled = false) {
  const bytes = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
  return inboundPayloadOf({
    messageId: '00000000-0000-5000-8000-000000000000',
    mail: await parseInboundMail(bytes),
    authentication: AUTH,
    raw: bytes,
    envelopeFrom: 'bounce@sender.example',
    originalRecipient: `${HASH}+box@${DOMAIN}`,
    inboundDomain: DOMAIN,
    rawEmailEnabled,
  });
}

describe("Postmark's inbound JSON of a mail", () => {
  it('decodes 8-bit and encoded-word headers', async () => {
    const payload = await payloadOf(
      `From: =?utf-8?q?Jos=C3=A9?= <jose@sender.example>\r\nTo: ${HASH}@${DOMAIN}\r\nSubject: café ünïcode\r\n` +
        'Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\nolá\r\n',
    );
    expect(payload).toMatchObject({ FromName: 'José', Subject: 'café ünïcode', MailboxHash: 'box' });
    expect(payload.TextBody.trim()).toBe('olá');
  });

  it('reads a message of 1,000 parts, every attachment listed', async () => {
    const parts = Array.from(
      { length: 1000 },
      (_, i) =>
        `--b\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename="p${i}.txt"\r\n\r\npart ${i}\r\n`,
    ).join('');
    const payload = await payloadOf(
      `From: a@sender.example\r\nSubject: many\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n${parts}--b--\r\n`,
    );
    expect(payload.Attachments).toHaveLength(1000);
    expect(payload.Attachments[999]).toMatchObject({ Name: 'p999.txt', ContentType: 'text/plain' });
  });

  it('keeps an attached message whole, one attachment, never parsed (a zip of zips is bytes likewise)', async () => {
    const inner = 'From: x@y.example\r\nSubject: inner\r\n\r\nhello\r\n';
    const payload = await payloadOf(
      'From: a@sender.example\r\nSubject: outer\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n' +
        '--b\r\nContent-Type: text/plain\r\n\r\ntext\r\n' +
        `--b\r\nContent-Type: message/rfc822\r\n\r\n${inner}--b\r\n` +
        'Content-Type: application/zip\r\nContent-Disposition: attachment; filename="z.zip"\r\n' +
        'Content-Transfer-Encoding: base64\r\n\r\nUEsDBBQAAAAIAA==\r\n--b--\r\n',
    );
    expect(payload.Subject).toBe('outer');
    expect(payload.Attachments.map((a) => a.ContentType)).toEqual(['message/rfc822', 'application/zip']);
    expect(Buffer.from(payload.Attachments[0]!.Content, 'base64').toString()).toContain('Subject: inner');
  });

  it('never throws on broken MIME: too many delimiters, a binary blob, an empty message', async () => {
    const tooMany = await payloadOf(`From: a@sender.example\r\nSubject: s\r\n\r\n${'--x\r\n'.repeat(6000)}`);
    expect(tooMany.Headers).toContainEqual({ Name: 'X-Sendline-Unparsed', Value: expect.stringMatching(/delimit/) });
    expect(tooMany.From).toBe('bounce@sender.example');
    const blob = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256));
    await expect(payloadOf(blob)).resolves.toMatchObject({ MessageStream: 'inbound' });
    const empty = await payloadOf('');
    expect(empty.Headers).toContainEqual({ Name: 'X-Sendline-Unparsed', Value: 'an empty message' });
  });

  it('gives an attachment its bytes back however its base64 lines are written', async () => {
    // postal-mime is patched to take a line of base64 letters only without its regular expressions, and to find
    // lines by indexOf: every other shape of line still takes the general path, and the bytes are the same.
    const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919 + 13) % 256));
    const base64 = bytes.toString('base64');
    const lines = (width: number) => base64.match(new RegExp(`.{1,${width}}`, 'g'))!;
    // Each line a whole unit of its own, padded (some mailers pad every line).
    const padded = Array.from({ length: Math.ceil(bytes.length / 56) }, (_, i) =>
      bytes.subarray(i * 56, (i + 1) * 56).toString('base64'),
    );
    const shapes: Record<string, string[]> = {
      'CRLF, 76 a line': [lines(76).join('\r\n')],
      'LF only': [lines(76).join('\n')],
      'CRs before the LF': [lines(76).join('\r\r\n')],
      'spaces and tabs around': [lines(60).join(' \t\r\n  ')],
      'a padded unit on each line': [padded.join('\r\n')],
      'a character outside base64 in some lines': [
        lines(76)
          .map((l, i) => (i % 7 === 3 ? `${l}!` : l))
          .join('\r\n'),
      ],
    };
    for (const [shape, [body]] of Object.entries(shapes)) {
      const payload = await payloadOf(
        'From: a@sender.example\r\nSubject: bytes\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n' +
          '--b\r\nContent-Type: text/plain\r\n\r\ntext\r\n' +
          '--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="a.bin"\r\n' +
          `Content-Transfer-Encoding: base64\r\n\r\n${body}\r\n--b--\r\n`,
      );
      expect(payload.Attachments, shape).toEqual([
        { Name: 'a.bin', Content: base64, ContentType: 'application/octet-stream', ContentLength: 5000, ContentID: '' },
      ]);
      expect(payload.TextBody.trim(), shape).toBe('text');
    }
  });

  it('strips the quoted text from a reply of long lines, emoji included, as email-reply-parser does', async () => {
    // email-reply-parser is patched to reverse strings by slices of char codes instead of one character at a time:
    // the same code units, a 10,000-character line and a surrogate pair across a slice's edge included.
    const reply = `${'Thanks 😀 '.repeat(1100)}done`;
    const payload = await payloadOf(
      'From: a@sender.example\r\nSubject: Re: order\r\nContent-Type: text/plain; charset=utf-8\r\n' +
        `Content-Transfer-Encoding: 8bit\r\n\r\n${reply}\r\n\r\n` +
        'On Mon, Jan 5, 2026 at 10:00 AM Bob <bob@shop.example> wrote:\r\n> Your order shipped.\r\n> Bob\r\n',
    );
    expect(payload.StrippedTextReply).toBe(reply);
    expect(payload.TextBody).toContain('> Your order shipped.');
  });

  it('leaves out an attachment that would take the JSON over its limit, and says so', async () => {
    const big = Buffer.alloc(MAX_PAYLOAD_BYTES, 0x61).toString('base64');
    const payload = await payloadOf(
      'From: a@sender.example\r\nSubject: big\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n' +
        '--b\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n' +
        '--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="big.bin"\r\n' +
        `Content-Transfer-Encoding: base64\r\n\r\n${big}\r\n--b--\r\n`,
      true,
    );
    expect(payload.Attachments).toEqual([
      {
        Name: 'big.bin',
        Content: '',
        ContentType: 'application/octet-stream',
        ContentLength: MAX_PAYLOAD_BYTES,
        ContentID: '',
      },
    ]);
    expect(payload.Headers).toContainEqual({ Name: 'X-Sendline-Attachments-Omitted', Value: 'big.bin, RawEmail' });
    expect(payload.RawEmail).toBeUndefined();
    expect(Buffer.byteLength(JSON.stringify(payload))).toBeLessThan(MAX_PAYLOAD_BYTES);
  });
});

describe('mail to an organization’s own inbound domain', () => {
  it('gives every address there its MailboxHash after +, and no other domain’s', async () => {
    const own = 'reply.acme.example';
    const raw =
      `From: a@sender.example\r\nTo: "Orders" <orders+4711@Reply.Acme.Example>, x+y@elsewhere.example\r\n` +
      `Cc: help+Urgent@${own}\r\nSubject: where\r\n\r\nparcel?\r\n`;
    const bytes = Buffer.from(raw, 'utf8');
    const payload = inboundPayloadOf({
      messageId: '00000000-0000-5000-8000-000000000000',
      mail: await parseInboundMail(bytes),
      authentication: AUTH,
      raw: bytes,
      envelopeFrom: 'a@sender.example',
      originalRecipient: `orders+4711@${own}`,
      inboundDomain: DOMAIN,
      ownDomain: own,
      rawEmailEnabled: false,
    });
    expect(payload).toMatchObject({ OriginalRecipient: `orders+4711@${own}`, MailboxHash: '4711' });
    expect(payload.ToFull.map((r) => r.MailboxHash)).toEqual(['4711', '']);
    expect(payload.CcFull).toEqual([{ Email: `help+Urgent@${own}`, Name: '', MailboxHash: 'Urgent' }]);
  });
});
