import { describe, expect, it } from 'vitest';
import { MAX_REPORTED_RECIPIENTS, normalisedStatus, parseDeliveryStatus } from '../../src/returns';

/** The shapes of RFC 3464's appendix examples (A.1 simple, A.2 several recipients, A.4 delayed), our own names. */
const SIMPLE = `Reporting-MTA: dns; relay.example.edu

Original-Recipient: rfc822;louise@slip.example.edu
Final-Recipient: rfc822;louise@slip.example.edu
Action: failed
Status: 4.0.0
Diagnostic-Code: smtp; 426 connection timed out
Last-Attempt-Date: Thu, 7 Jul 1994 17:15:49 -0400
`;

const SEVERAL = `Reporting-MTA: dns; mailhost.example.com
Arrival-Date: Fri, 8 Jul 1994 09:21:47 -0400

Original-Recipient: rfc822;arathi@gateway.EXAMPLE.COM
Final-Recipient: rfc822;arathi@gateway.example.com
Action: failed
Status: 5.0.0 (permanent failure)
Diagnostic-Code: smtp; 550 'arathi@gateway.EXAMPLE.COM' is not a
    registered gateway user
Remote-MTA: dns; gateway.example.com

Original-Recipient: rfc822;john@lab.example.net
Final-Recipient: rfc822;john@lab.example.net
Action: delayed
Status: 4.0.0 (lab.example.net: host name lookup failure)

Original-Recipient: rfc822:will@campus.example.edu
Final-Recipient: rfc822;will@campus.example.edu
Action: failed
Status: 5.0.0
Diagnostic-Code: smtp; 550 user unknown
Remote-MTA: dns; campus.example.edu
`;

const DELAYED = `Reporting-MTA: dns; sun2.example.net

Final-Recipient: rfc822; ned@lab.example.net
Action: delayed
Status: 4.0.0
Will-Retry-Until: Sat, 9 Jul 1994 16:00:00 -0700
`;

describe('parseDeliveryStatus', () => {
  it('reads a simple report: the per-message fields and one recipient', () => {
    expect(parseDeliveryStatus(SIMPLE)).toEqual({
      reportingMta: 'relay.example.edu',
      recipients: [
        {
          originalRecipient: 'louise@slip.example.edu',
          finalRecipient: 'louise@slip.example.edu',
          action: 'failed',
          status: '4.0.0',
          diagnosticCode: 'smtp; 426 connection timed out',
        },
      ],
    });
  });

  it('reads one recipient per block, comments dropped from Status, folded diagnostics unfolded', () => {
    const report = parseDeliveryStatus(SEVERAL);
    expect(report.reportingMta).toBe('mailhost.example.com');
    expect(report.arrivalDate).toBe('Fri, 8 Jul 1994 09:21:47 -0400');
    expect(report.recipients).toEqual([
      {
        originalRecipient: 'arathi@gateway.EXAMPLE.COM',
        finalRecipient: 'arathi@gateway.example.com',
        action: 'failed',
        status: '5.0.0',
        diagnosticCode: "smtp; 550 'arathi@gateway.EXAMPLE.COM' is not a registered gateway user",
        remoteMta: 'gateway.example.com',
      },
      {
        originalRecipient: 'john@lab.example.net',
        finalRecipient: 'john@lab.example.net',
        action: 'delayed',
        status: '4.0.0',
      },
      {
        originalRecipient: 'will@campus.example.edu',
        finalRecipient: 'will@campus.example.edu',
        action: 'failed',
        status: '5.0.0',
        diagnosticCode: 'smtp; 550 user unknown',
        remoteMta: 'campus.example.edu',
      },
    ]);
  });

  it('reads a delayed report', () => {
    expect(parseDeliveryStatus(DELAYED).recipients).toEqual([
      { finalRecipient: 'ned@lab.example.net', action: 'delayed', status: '4.0.0' },
    ]);
  });

  it('matches field names whatever their case, and takes CRLF line endings', () => {
    const text = 'REPORTING-MTA: DNS; Mx.Example\r\n\r\nfinal-recipient: RFC822; bob@example.org\r\naction: FAILED\r\n';
    expect(parseDeliveryStatus(text)).toEqual({
      reportingMta: 'Mx.Example',
      recipients: [{ finalRecipient: 'bob@example.org', action: 'failed' }],
    });
  });

  it('splits two recipients that an MTA wrote without a blank line between them', () => {
    const text = `Reporting-MTA: dns; mx.example
Final-Recipient: rfc822; a@example.org
Action: failed
Status: 5.1.1
Final-Recipient: rfc822; b@example.org
Action: delayed
Status: 4.4.1
`;
    expect(parseDeliveryStatus(text).recipients).toEqual([
      { finalRecipient: 'a@example.org', action: 'failed', status: '5.1.1' },
      { finalRecipient: 'b@example.org', action: 'delayed', status: '4.4.1' },
    ]);
  });

  it("takes a recipient's missing or unknown Action from its Status's class", () => {
    const text = `Final-Recipient: rfc822; a@example.org
Status: 5.2.2

Final-Recipient: rfc822; b@example.org
Action: bounced
Status: 4.2.2

Final-Recipient: rfc822; c@example.org
Action: Delivered (to the mailbox)
`;
    expect(parseDeliveryStatus(text).recipients.map((r) => r.action)).toEqual(['failed', 'delayed', 'delivered']);
  });

  it('leaves out a recipient with neither a known Action nor a Status', () => {
    expect(parseDeliveryStatus('Final-Recipient: rfc822; a@example.org\nAction: vanished\n').recipients).toEqual([]);
  });

  it('names no recipient in a report of per-message fields only, or in noise', () => {
    expect(parseDeliveryStatus('Reporting-MTA: dns; mx.example\n').recipients).toEqual([]);
    expect(parseDeliveryStatus('\u0000\u00ff garbage without fields').recipients).toEqual([]);
  });

  it('keeps the relayed and expanded actions', () => {
    const text =
      'Final-Recipient: rfc822; a@example.org\nAction: relayed\n\nFinal-Recipient: rfc822; l@example.org\nAction: expanded\n';
    expect(parseDeliveryStatus(text).recipients.map((r) => r.action)).toEqual(['relayed', 'expanded']);
  });

  it('keeps a Status only when it is an enhanced status code', () => {
    expect(
      parseDeliveryStatus('Final-Recipient: rfc822; a@x.example\nAction: failed\nStatus: failed\n').recipients,
    ).toEqual([{ finalRecipient: 'a@x.example', action: 'failed' }]);
  });

  it(`reads at most ${MAX_REPORTED_RECIPIENTS} recipients`, () => {
    const block = (i: number) => `Final-Recipient: rfc822; r${i}@example.org\nAction: failed\nStatus: 5.1.1\n`;
    const text = Array.from({ length: MAX_REPORTED_RECIPIENTS + 5 }, (_, i) => block(i)).join('\n');
    expect(parseDeliveryStatus(text).recipients).toHaveLength(MAX_REPORTED_RECIPIENTS);
  });
});

describe('normalisedStatus', () => {
  it.each([
    ['5.1.1', '5.1.1'],
    ['5.01.001', '5.1.1'],
    ['4.4.7 (delivery time expired)', '4.4.7'],
    ['5.1.10', '5.1.10'],
    ['2.0.0', '2.0.0'],
    ['6.1.1', undefined],
    ['5.1', undefined],
    ['5.1.1.1', undefined],
    ['', undefined],
  ])('%j → %j', (value, expected) => {
    expect(normalisedStatus(value)).toBe(expected);
  });
});
