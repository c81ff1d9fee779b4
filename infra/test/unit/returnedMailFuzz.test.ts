import { readFileSync, readdirSync } from 'node:fs';
import { addressesNamedBy, returnedMailVerdicts, type ReturnedMail } from '@sendline/domain';
import { describe, expect, it } from 'vitest';
import { READING_FAILED, readReturnedMail } from '../../src/mail';

/**
 * readReturnedMail never throws and always says what a message is, whatever comes to our MX: each fixture and each
 * broken message below, then each of them broken further by a seeded generator (truncated, ranges cut or doubled,
 * binary noise, boundaries that no longer match, an unknown charset, a transfer encoding that does not fit, a part
 * dropped, line endings mangled). The loop is sized to what it proves: every mutation on every shape of message, a
 * few times over (about 400 messages); the same seed gives the same messages on every run, and nothing is timed.
 */

const FIXTURES = new URL('../fixtures/returned-mail/', import.meta.url);
const fixtures = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.eml'))
  .map((name) => [name, readFileSync(new URL(name, FIXTURES))] as const);

const HEAD = 'From: MAILER-DAEMON@mx.example.net\r\nSubject: Undelivered Mail Returned to Sender\r\n';
const REPORT = `${HEAD}Content-Type: multipart/report; report-type=delivery-status; boundary="B"\r\n\r\n`;
const DSN_PART = '--B\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example.net\r\n\r\n';

/** Messages broken from the start: what the generator's mutations are applied to besides the fixtures. */
const broken: (readonly [string, Buffer])[] = [
  ['a report without recipients', Buffer.from(`${REPORT}${DSN_PART}--B--\r\n`)],
  ['a report without its parts', Buffer.from(`${REPORT}--B\r\nContent-Type: text/plain\r\n\r\nSorry.\r\n--B--\r\n`)],
  [
    'a report whose boundary is not the one declared',
    Buffer.from(
      `${REPORT}--C\r\n${DSN_PART.slice(4)}Final-Recipient: rfc822; a@x.example\r\nAction: failed\r\n--C--\r\n`,
    ),
  ],
  ['a report cut in its delivery status', Buffer.from(`${REPORT}${DSN_PART}Final-Recipient: rfc822; a@x.exa`)],
  [
    'a feedback report without its feedback part',
    Buffer.from(
      `From: fbl@x.example\r\nContent-Type: multipart/report; report-type=feedback-report; boundary="F"\r\n\r\n--F--\r\n`,
    ),
  ],
  [
    'an unknown charset',
    Buffer.from(
      `${HEAD}Content-Type: text/plain; charset=x-unheard-of\r\n\r\n<a@x.example>: 550 5.1.1 \xff\xfe\r\n`,
      'latin1',
    ),
  ],
  ['binary noise', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256))],
  [
    'a 1,000-part message',
    Buffer.from(
      `${REPORT}${Array.from({ length: 1000 }, (_, i) => `--B\r\nContent-Type: text/plain\r\n\r\n${i}\r\n`).join('')}--B--\r\n`,
    ),
  ],
  [
    'parts nested 200 deep',
    Buffer.from(
      HEAD +
        Array.from(
          { length: 200 },
          (_, i) => `Content-Type: multipart/mixed; boundary="n${i}"\r\n\r\n--n${i}\r\n`,
        ).join('') +
        'Content-Type: message/delivery-status\r\n\r\nFinal-Recipient: rfc822; a@x.example\r\nAction: failed\r\n',
    ),
  ],
  ['headers only', Buffer.from(`${HEAD}X-Folded: a\r\n${' b\r\n'.repeat(5000)}`)],
];

const corpus = [...fixtures, ...broken];

/** mulberry32: a small seeded generator, the same numbers on every run. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const below = (n: number) => Math.floor(next() * n);
  return { next, below, bytes: (n: number) => Buffer.from(Array.from({ length: n }, () => below(256))) };
}
type Random = ReturnType<typeof generator>;

const BOUNDARY = /boundary="?([^";\r\n]+)"?/gi;

const mutations: Record<string, (raw: Buffer, random: Random) => Buffer> = {
  truncate: (raw, random) => raw.subarray(0, random.below(raw.length + 1)),
  cutRange: (raw, random) => {
    const start = random.below(raw.length + 1);
    return Buffer.concat([raw.subarray(0, start), raw.subarray(start + random.below(512))]);
  },
  doubleRange: (raw, random) => {
    const start = random.below(raw.length + 1);
    const range = raw.subarray(start, start + random.below(512));
    return Buffer.concat([raw.subarray(0, start), range, range, raw.subarray(start)]);
  },
  overwriteNoise: (raw, random) => {
    const copy = Buffer.from(raw);
    for (let i = 0; i < 1 + random.below(32) && copy.length > 0; i++)
      copy[random.below(copy.length)] = random.below(256);
    return copy;
  },
  insertNoise: (raw, random) => {
    const at = random.below(raw.length + 1);
    return Buffer.concat([raw.subarray(0, at), random.bytes(1 + random.below(256)), raw.subarray(at)]);
  },
  breakBoundaries: (raw, random) => {
    let text = raw.toString('latin1');
    for (const [, boundary] of text.matchAll(BOUNDARY)) {
      const variant = ['', `${boundary}x`, boundary!.slice(1), `${boundary}--`][random.below(4)]!;
      text = text.replace(`--${boundary}\r\n`, `--${variant}\r\n`).replace(`--${boundary}\n`, `--${variant}\n`);
    }
    return Buffer.from(text, 'latin1');
  },
  unknownCharset: (raw, random) =>
    Buffer.from(
      raw.toString('latin1').replace(/charset="?[\w-]+"?/gi, `charset=x-fuzz-${random.below(1000)}`),
      'latin1',
    ),
  wrongEncoding: (raw, random) =>
    Buffer.from(
      raw
        .toString('latin1')
        .replace(/^(content-type:[^\r\n]*)$/gim, (line) =>
          random.below(2) === 0
            ? `${line}\r\nContent-Transfer-Encoding: ${['base64', 'quoted-printable', 'x-uue'][random.below(3)]}`
            : line,
        ),
      'latin1',
    ),
  dropPart: (raw, random) => {
    const text = raw.toString('latin1');
    const delimiters = [...text.matchAll(/^--[^\r\n]+$/gm)].map((match) => match.index);
    if (delimiters.length < 2) return raw;
    const first = random.below(delimiters.length - 1);
    return Buffer.from(text.slice(0, delimiters[first]) + text.slice(delimiters[first + 1]), 'latin1');
  },
  lineEndings: (raw, random) => {
    const text = raw.toString('latin1');
    const variants = [text.replace(/\r?\n/g, '\r'), text.replace(/\r/g, ''), text.replace(/\r?\n/g, '\r\n\r\n')];
    return Buffer.from(variants[random.below(variants.length)]!, 'latin1');
  },
  dropBlankLine: (raw, random) => {
    const text = raw.toString('latin1');
    const blanks = [...text.matchAll(/\r?\n\r?\n/g)].map((match) => [match.index, match[0].length] as const);
    if (blanks.length === 0) return raw;
    const [at, length] = blanks[random.below(blanks.length)]!;
    return Buffer.from(text.slice(0, at) + '\n' + text.slice(at + length), 'latin1');
  },
};
const mutationNames = Object.keys(mutations);

const KINDS = ['DeliveryReport', 'Complaint', 'AutoReply', 'Unrecognized'];
const ACTIONS = ['failed', 'delayed', 'delivered', 'relayed', 'expanded'];

/** What every reading must be, whatever the message: plain data of a known kind, with verdicts that can be taken. */
function expectWellFormed(mail: ReturnedMail, label: string) {
  expect(KINDS, label).toContain(mail.kind);
  expect(JSON.parse(JSON.stringify(mail)), label).toEqual(mail);
  const verdicts = returnedMailVerdicts(mail);
  const addresses = addressesNamedBy(mail);
  expect(
    addresses.every((address) => address === address.toLowerCase()),
    label,
  ).toBe(true);
  switch (mail.kind) {
    case 'DeliveryReport':
      expect(mail.recipients.length, label).toBeGreaterThan(0);
      for (const recipient of mail.recipients) expect(ACTIONS, label).toContain(recipient.action);
      expect(verdicts, label).toHaveLength(mail.recipients.length);
      break;
    case 'Complaint':
      expect(mail.feedbackType, label).not.toBe('');
      expect(verdicts.length, label).toBeGreaterThan(0);
      break;
    case 'AutoReply':
      expect(
        verdicts.map((verdict) => verdict.suppress),
        label,
      ).toEqual([false]);
      break;
    case 'Unrecognized':
      expect(mail.reason, label).not.toBe('');
      expect(mail.reason.startsWith(READING_FAILED), `${label}: ${mail.reason}`).toBe(false);
      expect(verdicts, label).toEqual([]);
      break;
  }
}

describe('readReturnedMail on broken input', () => {
  it.each(corpus.map(([name, raw]) => [name, raw] as const))('%s: read, never thrown', async (_, raw) => {
    expectWellFormed(await readReturnedMail(raw), _);
  });

  it('never throws on ~400 messages broken further by a seeded generator', async () => {
    const random = generator(0x5eed_0033);
    const ROUNDS = 13;
    let read = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, raw] of corpus) {
        let message = raw;
        const applied: string[] = [];
        for (let i = 0, n = 1 + random.below(3); i < n; i++) {
          const mutation = mutationNames[random.below(mutationNames.length)]!;
          applied.push(mutation);
          message = mutations[mutation]!(message, random);
        }
        expectWellFormed(await readReturnedMail(message), `${name} after ${applied.join(', ')} (round ${round})`);
        read++;
      }
    }
    expect(read).toBe(ROUNDS * corpus.length);
  });
});
