import { describe, expect, it } from 'vitest';
import { looksLikeBounce, originalCopyInProse, readProseBounce } from '../../src/returns';

/** Prose in the shapes each mail system writes (our own words where theirs are long). */
const QMAIL = `Hi. This is the qmail-send program at mail.example.net.
I'm afraid I wasn't able to deliver your message to the following addresses.
This is a permanent error; I've given up. Sorry it didn't work out.

<bob@example.org>:
192.0.2.25 does not like recipient.
Remote host said: 550 5.1.1 <bob@example.org>: Recipient address rejected: User unknown
Giving up on 192.0.2.25.

<carol@example.net>:
Sorry, no mailbox here by that name. (#5.1.1)

--- Below this line is a copy of the message.

Return-Path: <b.token@rp.sendline.example>
Message-ID: <0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d@shop.example>
To: dave@example.org
Subject: 550 5.1.1 <dave@example.org>: not a reason

<dave@example.org>: 550 5.2.2 quoted in the original, not the bounce's
`;

const EXIM = `This message was created automatically by mail delivery software.

A message that you sent could not be delivered to one or more of its
recipients. This is a permanent error. The following address(es) failed:

  bob@example.org
    host mx.example.org [192.0.2.25]
    SMTP error from remote mail server after RCPT TO:<bob@example.org>:
    550 5.1.1 <bob@example.org>... User unknown
  carol@example.org
    host mx.example.org [192.0.2.25]
    SMTP error from remote mail server after end of data:
    552 Message size exceeds fixed maximum message size

------ This is a copy of the message, including all the headers. ------

Message-ID: <0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d@shop.example>
`;

const POSTFIX = `This is the mail system at host mx.example.net.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients. It's attached below.

                   The mail system

<bob@example.org>: host mx.example.org[192.0.2.25] said: 550 5.1.1
    <bob@example.org>: Recipient address rejected: User unknown in local
    recipient table (in reply to RCPT TO command)
`;

const OFFICE_365 = `Your message to bob@example.org couldn't be delivered.
bob wasn't found at example.org.

Action Required
Unknown To address

How to Fix It
The address may be misspelled or may not exist.

Diagnostic information for administrators:

Generating server: BN8PR12MB0001.example.prod.outlook.com

bob@example.org
Remote server returned '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup'

Original message headers:

Message-ID: <0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d@shop.example>
`;

const EXCHANGE_LEGACY = `Delivery has failed to these recipients or groups:

bob@example.org (bob@example.org)
The email address you entered couldn't be found. Please check the recipient's email address and try to resend the message.

Diagnostic information for administrators:

Generating server: mail.example.org

bob@example.org
#550 5.1.1 RESOLVER.ADR.RecipNotFound; not found ##
`;

const GMAIL = `** Address not found **

Your message wasn't delivered to bob@example.org because the address couldn't be found, or is unable to receive mail.

The response from the remote server was:
550 5.1.1 <bob@example.org>: Recipient address rejected: User unknown
`;

const SENDMAIL = `The original message was received at Mon, 2 Nov 2026 10:00:00 +0100
from mail.example.net [192.0.2.10]

   ----- The following addresses had permanent fatal errors -----
<bob@example.org>
    (reason: 550 5.1.1 <bob@example.org>... User unknown)

   ----- Transcript of session follows -----
... while talking to mx.example.org.:
>>> RCPT To:<bob@example.org>
<<< 550 5.1.1 <bob@example.org>... User unknown
`;

const POSTFIX_DELAY = `This is the mail system at host mx.example.net.

####################################################################
# THIS IS A WARNING ONLY.  YOU DO NOT NEED TO RESEND YOUR MESSAGE. #
####################################################################

Your message could not be delivered for more than 4 hour(s).
It will be retried until it is 5 day(s) old.

<bob@example.org>: host mx.example.org[192.0.2.25] said: 451 4.3.0 Temporary
    lookup failure (in reply to RCPT TO command)
`;

const QMAIL_EXPIRED = `Hi. This is the qmail-send program at mail.example.net.
I'm afraid I wasn't able to deliver your message to the following addresses.
This is a permanent error; I've given up. Sorry it didn't work out.

<bob@example.org>:
192.0.2.25 failed after I sent the message.
Remote host said: 421 4.4.2 mx.example.org Error: timeout exceeded
I'm not going to try again; this message has been in the queue too long.
`;

describe('readProseBounce', () => {
  it('reads qmail: each <address>: paragraph, a reply or a (#5.x.x) code, nothing from the copy of the message', () => {
    expect(readProseBounce(QMAIL)).toEqual([
      {
        finalRecipient: 'bob@example.org',
        action: 'failed',
        status: '5.1.1',
        diagnosticCode: '550 5.1.1 <bob@example.org>: Recipient address rejected: User unknown',
      },
      {
        finalRecipient: 'carol@example.net',
        action: 'failed',
        status: '5.1.1',
        diagnosticCode: 'Sorry, no mailbox here by that name. (#5.1.1)',
      },
    ]);
  });

  it("reads Exim's indented addresses with the reply below each, with or without an enhanced code", () => {
    const recipients = readProseBounce(EXIM);
    expect(recipients.map((r) => [r.finalRecipient, r.action, r.status, r.diagnosticCode])).toEqual([
      ['bob@example.org', 'failed', '5.1.1', '550 5.1.1 <bob@example.org>... User unknown'],
      ['carol@example.org', 'failed', undefined, '552 Message size exceeds fixed maximum message size'],
    ]);
  });

  it("reads Postfix's reply folded over the lines after the address", () => {
    expect(readProseBounce(POSTFIX)).toEqual([
      {
        finalRecipient: 'bob@example.org',
        action: 'failed',
        status: '5.1.1',
        diagnosticCode:
          '550 5.1.1 <bob@example.org>: Recipient address rejected: User unknown in local recipient table (in reply to RCPT TO command)',
      },
    ]);
  });

  it("reads Office 365's 'Your message to … couldn't be delivered' and its 'Remote server returned'", () => {
    expect(readProseBounce(OFFICE_365)).toEqual([
      {
        finalRecipient: 'bob@example.org',
        action: 'failed',
        status: '5.1.10',
        diagnosticCode: '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
      },
    ]);
  });

  it("reads older Exchange's 'address (address)' line and its '#550 5.1.1' code", () => {
    expect(readProseBounce(EXCHANGE_LEGACY).map((r) => [r.finalRecipient, r.status])).toEqual([
      ['bob@example.org', '5.1.1'],
    ]);
  });

  it("reads Gmail's 'wasn't delivered to …' and the remote server's response", () => {
    expect(readProseBounce(GMAIL).map((r) => [r.finalRecipient, r.action, r.status])).toEqual([
      ['bob@example.org', 'failed', '5.1.1'],
    ]);
  });

  it("reads sendmail's list of addresses with their reasons", () => {
    expect(readProseBounce(SENDMAIL).map((r) => [r.finalRecipient, r.action, r.status])).toEqual([
      ['bob@example.org', 'failed', '5.1.1'],
    ]);
  });

  it('calls a 4xx in a warning about a delay delayed', () => {
    expect(readProseBounce(POSTFIX_DELAY).map((r) => [r.finalRecipient, r.action, r.status])).toEqual([
      ['bob@example.org', 'delayed', '4.3.0'],
    ]);
  });

  it('calls a 4xx in a bounce that gave up failed', () => {
    expect(readProseBounce(QMAIL_EXPIRED).map((r) => [r.finalRecipient, r.action, r.status])).toEqual([
      ['bob@example.org', 'failed', '4.4.2'],
    ]);
  });

  it('takes the delay from the subject too', () => {
    const text = '<bob@example.org>: host mx said: 450 4.2.1 try later\n';
    expect(readProseBounce(text, { subject: 'Delayed Mail (still being retried)' })[0]?.action).toBe('delayed');
    expect(readProseBounce(text)[0]?.action).toBe('failed');
  });

  it('never takes our own addresses, mailer-daemon or postmaster for a recipient', () => {
    const text = `b.token@rp.sendline.example: 550 5.1.1 about the return path
postmaster@example.org: 550 5.7.1 ask the postmaster
<bob@example.org>: 550 5.1.1 user unknown
`;
    expect(
      readProseBounce(text, { ownAddresses: ['B.Token@rp.sendline.example'] }).map((r) => r.finalRecipient),
    ).toEqual(['bob@example.org']);
  });

  it('names nobody when no recipient or no code can be found', () => {
    expect(readProseBounce('Your message could not be delivered. Sorry.\n')).toEqual([]);
    expect(readProseBounce('<bob@example.org>:\nThe mailbox is gone.\n\n<carol@example.org>:\nAlso gone.\n')).toEqual(
      [],
    );
    expect(readProseBounce('')).toEqual([]);
  });

  it('does not read a size or an IP address as a status code', () => {
    expect(readProseBounce('<bob@example.org>:\nThe message of 452 bytes from 192.5.1.14 was refused.\n')).toEqual([]);
  });

  it('does not read a code out of the address itself', () => {
    expect(
      readProseBounce('  450-sales@example.org\n    550 5.1.1 user unknown\n').map((r) => r.finalRecipient),
    ).toEqual(['450-sales@example.org']);
  });
});

describe('originalCopyInProse', () => {
  it('is the text after the marker line, from its first non-blank line', () => {
    expect(originalCopyInProse(QMAIL)?.split('\r\n')[0]).toBe('Return-Path: <b.token@rp.sendline.example>');
    expect(originalCopyInProse(EXIM)?.split('\r\n')[0]).toBe(
      'Message-ID: <0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d@shop.example>',
    );
    expect(originalCopyInProse(OFFICE_365)?.split('\r\n')[0]).toBe(
      'Message-ID: <0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d@shop.example>',
    );
  });

  it('is undefined without a marker, or with nothing after it', () => {
    expect(originalCopyInProse(POSTFIX)).toBeUndefined();
    expect(originalCopyInProse('--- Below this line is a copy of the message.\n\n\n')).toBeUndefined();
  });
});

describe('looksLikeBounce', () => {
  const headers = (fields: Record<string, string>) => Object.entries(fields).map(([name, value]) => ({ name, value }));

  it.each([
    ['a delivery-status report type', {}, 'delivery-status'],
    ['From MAILER-DAEMON', { From: 'MAILER-DAEMON@mx.example.net (Mail Delivery System)' }, undefined],
    ['From postmaster', { From: 'postmaster@example.org' }, undefined],
    ["Gmail's sender", { From: 'Mail Delivery Subsystem <mailer-daemon@googlemail.com>' }, undefined],
    ["Exchange's system mailbox", { From: 'Microsoft Outlook <MicrosoftExchange329e71ec88ae@example.org>' }, undefined],
    ['Postfix subject', { Subject: 'Undelivered Mail Returned to Sender' }, undefined],
    ['Exim subject', { Subject: 'Mail delivery failed: returning message to sender' }, undefined],
    ['qmail subject', { Subject: 'failure notice' }, undefined],
    ['Gmail subject', { Subject: 'Delivery Status Notification (Failure)' }, undefined],
    ['Exchange subject', { Subject: 'Undeliverable: Your receipt' }, undefined],
    ['German Exchange subject', { Subject: 'Unzustellbar: Ihre Rechnung' }, undefined],
  ])('is true for %s', (_, fields, reportType) => {
    expect(looksLikeBounce(headers(fields), reportType)).toBe(true);
  });

  it.each([
    ['a reply', { From: 'bob@example.org', Subject: 'Re: Your receipt' }],
    ['an out-of-office', { From: 'bob@example.org', Subject: 'Automatic reply: Your receipt' }],
    ['no headers at all', {}],
    ['an empty Return-Path alone (automatic replies have one too)', { 'Return-Path': '<>', Subject: 'Auto: x' }],
  ])('is false for %s', (_, fields) => {
    expect(looksLikeBounce(headers(fields))).toBe(false);
  });
});
