import { describe, expect, it } from 'vitest';
import { returnedMailOf, type ReturnedMailParts } from '../../src/returns';

const headers = (fields: Record<string, string>) => Object.entries(fields).map(([name, value]) => ({ name, value }));
const ID = '0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d';
const ORIGINAL = headers({ 'Message-ID': `<${ID}@shop.example>`, To: 'bob@example.org', Subject: 'Your receipt' });
const BOUNCE_HEADERS = headers({
  From: 'MAILER-DAEMON@mx.example.net (Mail Delivery System)',
  To: 'b.token@rp.sendline.example',
  Subject: 'Undelivered Mail Returned to Sender',
  'Auto-Submitted': 'auto-replied',
});
const FAILED =
  'Reporting-MTA: dns; mx.example.net\n\nFinal-Recipient: rfc822; bob@example.org\nAction: failed\nStatus: 5.1.1\n';

const parts = (overrides: Partial<ReturnedMailParts>): ReturnedMailParts => ({ headers: BOUNCE_HEADERS, ...overrides });

describe('returnedMailOf', () => {
  describe('a delivery report', () => {
    it('is read from its delivery-status part, with the original it attaches', () => {
      expect(returnedMailOf(parts({ deliveryStatus: FAILED, originalHeaders: ORIGINAL, text: 'ignored' }))).toEqual({
        kind: 'DeliveryReport',
        prose: false,
        reportingMta: 'mx.example.net',
        recipients: [{ finalRecipient: 'bob@example.org', action: 'failed', status: '5.1.1' }],
        original: {
          messageId: `<${ID}@shop.example>`,
          sendlineMessageId: ID,
          to: 'bob@example.org',
          subject: 'Your receipt',
        },
      });
    });

    it('without an original has an empty one', () => {
      expect(returnedMailOf(parts({ deliveryStatus: FAILED }))).toMatchObject({ kind: 'DeliveryReport', original: {} });
    });

    it('that names no recipient is read from its prose', () => {
      const mail = returnedMailOf(
        parts({
          deliveryStatus: 'Reporting-MTA: dns; mx.example.net\n',
          text: '<bob@example.org>: said: 550 5.1.1 unknown\n',
        }),
      );
      expect(mail).toMatchObject({
        kind: 'DeliveryReport',
        prose: true,
        recipients: [{ finalRecipient: 'bob@example.org' }],
      });
    });

    it('that names no recipient, nor its prose, is Unrecognized', () => {
      expect(returnedMailOf(parts({ deliveryStatus: 'Reporting-MTA: dns; mx.example.net\n', text: 'Sorry.' }))).toEqual(
        {
          kind: 'Unrecognized',
          reason: 'a delivery report that names no recipient',
          subject: 'Undelivered Mail Returned to Sender',
          from: 'MAILER-DAEMON@mx.example.net (Mail Delivery System)',
        },
      );
    });
  });

  describe('a bounce in prose', () => {
    it('is a DeliveryReport (prose: true) where a recipient and a code are found', () => {
      expect(
        returnedMailOf(
          parts({ text: '<bob@example.org>:\nRemote host said: 550 5.1.1 unknown\n', originalHeaders: ORIGINAL }),
        ),
      ).toEqual({
        kind: 'DeliveryReport',
        prose: true,
        recipients: [
          { finalRecipient: 'bob@example.org', action: 'failed', status: '5.1.1', diagnosticCode: '550 5.1.1 unknown' },
        ],
        original: {
          messageId: `<${ID}@shop.example>`,
          sendlineMessageId: ID,
          to: 'bob@example.org',
          subject: 'Your receipt',
        },
      });
    });

    it('never takes its own To (our return path) for a recipient', () => {
      expect(returnedMailOf(parts({ text: 'b.token@rp.sendline.example: 550 5.1.1 unknown\n' }))).toMatchObject({
        kind: 'Unrecognized',
        reason: 'a bounce in which no recipient with a status code can be found',
      });
    });

    it('is not read from a message that does not look like a bounce', () => {
      const mail = returnedMailOf({
        headers: headers({ From: 'bob@example.org', Subject: 'Re: Your receipt' }),
        text: '<bob@example.org>: 550 5.1.1 as a joke\n',
      });
      expect(mail).toMatchObject({ kind: 'Unrecognized', reason: 'neither a report, a bounce nor an automatic reply' });
    });
  });

  describe('a complaint', () => {
    it('is read from its feedback-report part', () => {
      const report =
        'Feedback-Type: abuse\nUser-Agent: Yahoo!-Mail-Feedback/2.0\nVersion: 0.1\nOriginal-Rcpt-To: bob@example.org\n';
      expect(
        returnedMailOf({
          headers: [],
          reportType: 'feedback-report',
          feedbackReport: report,
          originalHeaders: ORIGINAL,
        }),
      ).toEqual({
        kind: 'Complaint',
        feedbackType: 'abuse',
        userAgent: 'Yahoo!-Mail-Feedback/2.0',
        originalRcptTo: ['bob@example.org'],
        original: {
          messageId: `<${ID}@shop.example>`,
          sendlineMessageId: ID,
          to: 'bob@example.org',
          subject: 'Your receipt',
        },
      });
    });

    it('comes before a delivery-status part in the same message', () => {
      expect(returnedMailOf(parts({ feedbackReport: 'Feedback-Type: abuse\n', deliveryStatus: FAILED })).kind).toBe(
        'Complaint',
      );
    });

    it('without a Feedback-Type is Unrecognized', () => {
      expect(returnedMailOf({ headers: [], feedbackReport: 'User-Agent: x\n' })).toEqual({
        kind: 'Unrecognized',
        reason: 'a feedback report without a Feedback-Type',
      });
    });

    it('whose part is missing is Unrecognized', () => {
      expect(returnedMailOf({ headers: [], reportType: 'feedback-report' })).toEqual({
        kind: 'Unrecognized',
        reason: 'a feedback report without its feedback-report part',
      });
    });
  });

  describe('an automatic reply', () => {
    const reply = headers({
      From: 'Bob <bob@example.org>',
      Subject: 'Automatic reply: Your receipt',
      'In-Reply-To': `<${ID}@shop.example>`,
    });

    it('names the message it answers from In-Reply-To', () => {
      expect(returnedMailOf({ headers: reply, text: 'I am away until Monday.' })).toEqual({
        kind: 'AutoReply',
        subject: 'Automatic reply: Your receipt',
        from: 'Bob <bob@example.org>',
        original: { messageId: `<${ID}@shop.example>`, sendlineMessageId: ID },
      });
    });

    it('takes the original it attaches over In-Reply-To', () => {
      const mail = returnedMailOf({ headers: reply, originalHeaders: headers({ 'Message-ID': '<other@x.example>' }) });
      expect(mail).toMatchObject({ kind: 'AutoReply', original: { messageId: '<other@x.example>' } });
    });

    it('is not what a bounce is, though bounces say Auto-Submitted: auto-replied', () => {
      expect(returnedMailOf(parts({ text: '<bob@example.org>: 550 5.1.1 unknown\n' })).kind).toBe('DeliveryReport');
    });

    it('is not what an unreadable bounce is either: that one is Unrecognized, to be looked at', () => {
      expect(returnedMailOf(parts({ text: 'Sorry.' }))).toMatchObject({
        kind: 'Unrecognized',
        reason: 'a bounce in which no recipient with a status code can be found',
      });
    });
  });

  it('shows at most 998 characters of a subject folded without end', () => {
    const subject = `x${'\r\n y'.repeat(10_000)}`;
    const mail = returnedMailOf({ headers: headers({ Subject: subject }) });
    expect(mail).toMatchObject({ kind: 'Unrecognized', subject: `x${' y'.repeat(498)}` });
  });

  it('anything else is Unrecognized, with its subject and From', () => {
    expect(
      returnedMailOf({ headers: headers({ From: ' spam@junk.example ', Subject: 'You won!' }), text: 'Click' }),
    ).toEqual({
      kind: 'Unrecognized',
      reason: 'neither a report, a bounce nor an automatic reply',
      subject: 'You won!',
      from: 'spam@junk.example',
    });
  });
});
