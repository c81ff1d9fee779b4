import type { MessageAcceptedData } from '@sendline/domain';
import { describe, expect, it } from 'vitest';
import { composeMessage, mimeTreeOf } from '../../src/smtp/compose';
import { mimeBytesAtOnce } from '../../src/smtp/mimeBytes';
import { acceptedMessage as accepted, messageShapes as shapes } from './acceptedMessage';

/**
 * The message bytes written at once are nodemailer's streamed bytes (`MimeNode.build()`), byte for byte: for every
 * shape of message the API accepts, and for bodies that exercise each rule of quoted-printable and base64 (whitespace
 * before line breaks and at the end, long lines, 8-bit text, CR and LF alone). A message that cannot be written at
 * once still composes, through nodemailer's stream.
 */

/** A repeatable stream of pseudo-random numbers (a test that fails can be run again with the same bodies). */
function numbers(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** Text made of the pieces quoted-printable treats differently, in a random order. */
function awkwardText(random: () => number, pieces: number): string {
  const alphabet = [
    'word',
    ' ',
    '  ',
    '\t',
    '\n',
    '\r\n',
    '\r',
    '.',
    '=',
    'ü',
    'Привет',
    '😀',
    'x'.repeat(90),
    ' \n',
    '\t\r\n',
  ];
  let text = '';
  for (let i = 0; i < pieces; i++) text += alphabet[Math.floor(random() * alphabet.length)];
  return text;
}

const base64Of = (bytes: Buffer) => bytes.toString('base64');

async function streamed(message: MessageAcceptedData): Promise<Buffer> {
  return mimeTreeOf(message).build();
}

describe('mimeBytesAtOnce', () => {
  for (const [shape, overrides] of shapes) {
    it(`writes ${shape} as nodemailer streams it`, async () => {
      const message = accepted(overrides);
      const atOnce = mimeBytesAtOnce(mimeTreeOf(message));
      expect(atOnce).toBeDefined();
      expect(atOnce!.toString('latin1')).toBe((await streamed(message)).toString('latin1'));
    });
  }

  it('writes 300 messages of random awkward text, HTML and text attachments as nodemailer streams them', async () => {
    const random = numbers(20261128);
    for (let i = 0; i < 300; i++) {
      const message = accepted({
        messageId: `m-${i}`,
        subject: awkwardText(random, 3).replace(/[\r\n]/g, ''),
        textBody: awkwardText(random, 1 + Math.floor(random() * 60)),
        ...(i % 3 === 0 && { htmlBody: `<p>${awkwardText(random, 40)}</p>` }),
        ...(i % 5 === 0 && {
          attachments: [
            { name: 'a.txt', content: base64Of(Buffer.from(awkwardText(random, 20))), contentType: 'text/plain' },
            { name: 'b.bin', content: base64Of(Buffer.from(awkwardText(random, 30))), contentType: 'image/gif' },
          ],
        }),
      });
      const atOnce = mimeBytesAtOnce(mimeTreeOf(message));
      expect(atOnce, `message ${i}`).toBeDefined();
      expect(atOnce!.toString('latin1'), `message ${i}`).toBe((await streamed(message)).toString('latin1'));
    }
  });

  it('leaves a quoted-printable body of more than one encoder slice (64 KiB) to the stream, and it still composes', async () => {
    const message = accepted({
      textBody: 'Your order.',
      htmlBody: `<p>${'Grüße, '.repeat(12_000)}</p> `,
      attachments: [{ name: 'a.txt', content: base64Of(Buffer.from('Order 42')), contentType: 'text/plain' }],
    });
    expect(mimeBytesAtOnce(mimeTreeOf(message))).toBeUndefined();
    const composed = await composeMessage(message);
    expect(composed.toString('latin1')).toBe((await streamed(message)).toString('latin1'));
    expect(composed.length).toBeGreaterThan(64 * 1024);
  });

  it('writes a large base64 attachment at once, as nodemailer streams it', async () => {
    const message = accepted({
      attachments: [{ name: 'big.pdf', content: base64Of(Buffer.alloc(300_001, 7)), contentType: 'application/pdf' }],
    });
    const atOnce = mimeBytesAtOnce(mimeTreeOf(message));
    expect(atOnce).toBeDefined();
    expect(atOnce!.equals(await streamed(message))).toBe(true);
  });
});
