import { describe, expect, it } from 'vitest';
import { addressesNamedBy, returnedMailOf, returnedMailVerdicts, type ReturnedMailParts } from '../../src/returns';

/**
 * The reading of report text never throws, whatever the parts hold: part texts and headers assembled by a seeded
 * generator from the pieces reports are made of (field lines, folded lines, blank lines, codes, addresses, comments)
 * and from noise. 2,000 sets of parts: enough for every piece to meet every other many times; the same seed gives
 * the same parts on every run.
 */

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
  const pick = <T>(items: readonly T[]): T => items[below(items.length)]!;
  return { below, pick };
}

const PIECES = [
  'Reporting-MTA: dns; mx.example.net',
  'Final-Recipient: rfc822; bob@example.org',
  'Original-Recipient: rfc822:BOB@example.org',
  'Final-Recipient: utf-8; j\\x{F6}rg@example.de',
  'Final-Recipient: <>',
  'Action: failed',
  'Action: delayed (retrying)',
  'Action: ',
  'Action: exploded',
  'Status: 5.1.1',
  'Status: 4.4.7 (expired)',
  'Status: 2.0.0',
  'Status: 9.9.9',
  'Status: 5.',
  'Diagnostic-Code: smtp; 550 5.1.1 <bob@example.org>: User unknown',
  'Diagnostic-Code: smtp; 550-5.7.26 unauthenticated',
  'Diagnostic-Code: X-Postfix; connect to mx: timed out',
  'Diagnostic-Code: smtp;',
  'Diagnostic-Code: 421 4.4.2 later',
  'Remote-MTA: dns; (comment only)',
  'Feedback-Type: abuse',
  'Feedback-Type: not-spam',
  'Feedback-Type:',
  'Original-Rcpt-To: <carol@example.net>',
  'Original-Mail-From: <>',
  '    folded continuation 550 5.2.2',
  '\t(unclosed comment',
  '',
  '',
  '   ',
  '<bob@example.org>:',
  '  carol@example.net',
  'Remote host said: 550 5.1.1 unknown',
  'Sorry, no mailbox here by that name. (#5.1.1)',
  "Your message to dana@example.com couldn't be delivered.",
  "Remote server returned '550 5.1.10 RESOLVER.ADR.RecipientNotFound'",
  '--- Below this line is a copy of the message.',
  'This is a warning only: delayed, will retry.',
  'postmaster@example.org: 554 5.7.1 refused',
  '\u0000\u00ff\ufffd\ud800',
  '((((((((((',
  '"quoted ( not a comment',
  ':::::',
  '@@@@ a@b@c',
];

const HEADER_NAMES = [
  'From',
  'To',
  'Subject',
  'Auto-Submitted',
  'X-Autoreply',
  'Precedence',
  'In-Reply-To',
  'References',
];
const HEADER_VALUES = [
  'MAILER-DAEMON@mx.example.net',
  'b.token@rp.sendline.example',
  'Undelivered Mail Returned to Sender',
  'Automatic reply: Your receipt',
  'auto-replied',
  'no',
  'auto_reply',
  '<0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d@shop.example>',
  '',
  '<<<<',
];

describe('returnedMailOf on generated parts', () => {
  it('never throws, and gives a well-formed reading with verdicts', () => {
    const random = generator(0x0033_b0b);
    const text = () =>
      Array.from({ length: random.below(40) }, () => random.pick(PIECES)).join(random.pick(['\n', '\r\n', '\r']));
    const headers = () =>
      Array.from({ length: random.below(8) }, () => ({
        name: random.pick(HEADER_NAMES),
        value: random.pick(HEADER_VALUES),
      }));
    for (let i = 0; i < 2000; i++) {
      const parts: ReturnedMailParts = {
        headers: headers(),
        ...(random.below(3) === 0 && { reportType: random.pick(['delivery-status', 'feedback-report', 'other']) }),
        ...(random.below(2) === 0 && { deliveryStatus: text() }),
        ...(random.below(4) === 0 && { feedbackReport: text() }),
        ...(random.below(2) === 0 && { originalHeaders: headers() }),
        ...(random.below(2) === 0 && { text: text() }),
      };
      const mail = returnedMailOf(parts);
      const verdicts = returnedMailVerdicts(mail);
      addressesNamedBy(mail);
      if (mail.kind === 'DeliveryReport') {
        expect(mail.recipients.length).toBeGreaterThan(0);
        expect(verdicts).toHaveLength(mail.recipients.length);
      }
      if (mail.kind === 'Unrecognized') expect(verdicts).toEqual([]);
    }
  });
});
