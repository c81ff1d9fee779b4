import { describe, expect, it } from 'vitest';
import { COMPLAINT_FEEDBACK_TYPES, isComplaintFeedbackType, parseFeedbackReport } from '../../src/returns';

/** The shape of RFC 5965's example report (its appendix B.2), our own names. */
const RFC_5965 = `Feedback-Type: abuse
User-Agent: SomeGenerator/1.0
Version: 1
Original-Mail-From: <b.abcdef@bounces.example.net>
Original-Rcpt-To: <user@receiver.example.com>
Arrival-Date: Thu, 8 Mar 2005 14:00:00 EDT
Reporting-MTA: dns; mail.receiver.example.com
Source-IP: 192.0.2.1
Authentication-Results: mail.receiver.example.com;
          spf=fail smtp.mail=somespammer@example.com
Reported-Domain: example.net
Reported-Uri: http://example.net/earn_money.html
`;

describe('parseFeedbackReport', () => {
  it("reads RFC 5965's example", () => {
    expect(parseFeedbackReport(RFC_5965)).toEqual({
      feedbackType: 'abuse',
      userAgent: 'SomeGenerator/1.0',
      version: '1',
      originalMailFrom: 'b.abcdef@bounces.example.net',
      originalRcptTo: ['user@receiver.example.com'],
      arrivalDate: 'Thu, 8 Mar 2005 14:00:00 EDT',
    });
  });

  it('keeps every Original-Rcpt-To', () => {
    const text = 'Feedback-Type: abuse\nOriginal-Rcpt-To: a@example.org\nOriginal-Rcpt-To: <b@example.org>\n';
    expect(parseFeedbackReport(text).originalRcptTo).toEqual(['a@example.org', 'b@example.org']);
  });

  it('lowercases the Feedback-Type and drops its comments', () => {
    expect(parseFeedbackReport('FEEDBACK-TYPE: Abuse (user clicked "spam")\n').feedbackType).toBe('abuse');
  });

  it('takes the Received-Date of the draft-era reports (AOL, Yahoo) for the arrival date', () => {
    expect(
      parseFeedbackReport('Feedback-Type: abuse\nReceived-Date: Mon, 2 Nov 2026 10:00:00 +0000\n').arrivalDate,
    ).toBe('Mon, 2 Nov 2026 10:00:00 +0000');
  });

  it('names no feedback type and no recipient when the report has none', () => {
    expect(parseFeedbackReport('User-Agent: x/1\n')).toEqual({ userAgent: 'x/1', originalRcptTo: [] });
    expect(parseFeedbackReport('Feedback-Type: \n').feedbackType).toBeUndefined();
  });

  it('reads an empty reverse path as no Original-Mail-From', () => {
    expect(parseFeedbackReport('Feedback-Type: abuse\nOriginal-Mail-From: <>\n').originalMailFrom).toBeUndefined();
  });
});

describe('which feedback types are spam complaints', () => {
  it.each(['abuse', 'fraud', 'ABUSE'])('%s is', (type) => {
    expect(isComplaintFeedbackType(type)).toBe(true);
  });

  it.each(['not-spam', 'virus', 'auth-failure', 'other', 'opt-out', 'something-new'])('%s is not', (type) => {
    expect(isComplaintFeedbackType(type)).toBe(false);
  });

  it('are written down in one list', () => {
    expect(COMPLAINT_FEEDBACK_TYPES).toEqual(['abuse', 'fraud']);
  });
});
