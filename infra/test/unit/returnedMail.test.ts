import { readFileSync, readdirSync } from 'node:fs';
import { addressesNamedBy, returnedMailVerdicts, type ReturnedMail } from '@sendline/domain';
import { describe, expect, it } from 'vitest';
import { readReturnedMail, RETURNED_MAIL_LIMITS, textOfHtml } from '../../src/mail';
import { composeMessage } from '../../src/smtp/compose';
import { acceptedMessage } from './acceptedMessage';

/**
 * Whole messages that came back to our return path, read from their bytes: the fixtures under
 * infra/test/fixtures/returned-mail/ (the RFCs' examples and the big systems' shapes, written by hand), the
 * composer's own message attached to a report, and messages at the limits. The field parsing and the verdicts
 * are tested line by line in domain/test/returns/.
 */

const FIXTURES = new URL('../fixtures/returned-mail/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES));
const read = (name: string) => readReturnedMail(fixture(name));
const verdictsOf = (mail: ReturnedMail) =>
  returnedMailVerdicts(mail).map((v) => [
    v.kind,
    v.recipient,
    'classification' in v ? v.classification.kind : undefined,
  ]);

const ID = '0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d';
const RETURN_PATH = 'b.aaaabbbbccccddddeeeeffffgggghhhhiiiijjjjkkkk@rp.sendline.test';
const OURS = { messageId: `<${ID}@shop.example.test>`, sendlineMessageId: ID };

describe('readReturnedMail: delivery reports', () => {
  it("reads Postfix's DSN whole: the report, and the original it attaches with its encoded subject", async () => {
    expect(await read('postfix-dsn.eml')).toEqual({
      kind: 'DeliveryReport',
      prose: false,
      reportingMta: 'mx.example.net',
      recipients: [
        {
          finalRecipient: 'bob@example.org',
          originalRecipient: 'bob@example.org',
          action: 'failed',
          status: '5.1.1',
          diagnosticCode:
            'smtp; 550 5.1.1 <bob@example.org>: Recipient address rejected: User unknown in local recipient table',
          remoteMta: 'mx.example.org',
        },
      ],
      original: {
        ...OURS,
        returnPath: RETURN_PATH,
        to: 'Bob <bob@example.org>',
        subject: 'Ihre Bestellung – Übersicht',
      },
    });
  });

  it.each([
    ['rfc3464-simple.eml', [['Bounced', 'louise@slip.example.edu', 'SoftBounce']]],
    [
      'rfc3464-several-recipients.eml',
      [
        ['Bounced', 'arathi@gateway.EXAMPLE.COM', 'HardBounce'],
        ['Delayed', 'john@lab.example.net', 'Transient'],
        ['Bounced', 'will@campus.example.edu', 'HardBounce'],
        ['NoChange', 'relayed@elsewhere.example.org', undefined],
      ],
    ],
    ['rfc3464-delayed.eml', [['Delayed', 'ned@lab.example.net', 'Transient']]],
    ['postfix-dsn.eml', [['Bounced', 'bob@example.org', 'HardBounce']]],
    ['postfix-delayed.eml', [['Delayed', 'carol@example.net', 'Transient']]],
    ['exim-dsn.eml', [['Bounced', 'bob@example.org', 'HardBounce']]],
    ['office365-ndr.eml', [['Bounced', 'bob@example.org', 'HardBounce']]],
    ['gmail-dsn.eml', [['Bounced', 'bob@example.org', 'HardBounce']]],
    ['gmail-policy.eml', [['Bounced', 'dana@gmail.example', 'PolicyRejection']]],
  ])('%s: its delivery-status part gives %j', async (name, verdicts) => {
    const mail = await read(name);
    expect(mail).toMatchObject({ kind: 'DeliveryReport', prose: false, original: OURS });
    expect(verdictsOf(mail)).toEqual(verdicts);
  });

  it.each([
    [
      'exim-prose.eml',
      [
        ['Bounced', 'bob@example.org', 'HardBounce'],
        ['Bounced', 'carol@example.org', 'SoftBounce'],
      ],
    ],
    [
      'qmail-prose.eml',
      [
        ['Bounced', 'bob@example.org', 'HardBounce'],
        ['Bounced', 'carol@example.net', 'HardBounce'],
      ],
    ],
    ['exchange-html-prose.eml', [['Bounced', 'bob@example.org', 'HardBounce']]],
  ])('%s: its prose gives %j, and the copy of the original our message id', async (name, verdicts) => {
    const mail = await read(name);
    expect(mail).toMatchObject({ kind: 'DeliveryReport', prose: true, original: OURS });
    expect(verdictsOf(mail)).toEqual(verdicts);
  });

  it('reads the same message with CRLF line endings as with LF', async () => {
    for (const name of fixtureNames()) {
      const lf = fixture(name).toString('latin1').replace(/\r\n/g, '\n');
      const crlf = lf.replace(/\n/g, '\r\n');
      expect(await readReturnedMail(Buffer.from(crlf, 'latin1')), name).toEqual(
        await readReturnedMail(Buffer.from(lf, 'latin1')),
      );
    }
  });
});

describe('readReturnedMail: complaints', () => {
  it("reads RFC 5965's example report", async () => {
    expect(await read('rfc5965-abuse.eml')).toEqual({
      kind: 'Complaint',
      feedbackType: 'abuse',
      userAgent: 'SomeGenerator/1.0',
      originalRcptTo: ['user@receiver.example.com'],
      originalMailFrom: RETURN_PATH,
      arrivalDate: 'Thu, 12 Nov 2026 13:59:00 EDT',
      original: { ...OURS, returnPath: RETURN_PATH, to: '<user@receiver.example.com>', subject: 'Your receipt' },
    });
  });

  it.each([
    ['yahoo-arf.eml', 'abuse', [['SpamComplaint', 'erin@yahoo.example', undefined]]],
    ['microsoft-jmrp.eml', 'abuse', [['SpamComplaint', 'frank@hotmail.example', undefined]]],
    ['aol-arf.eml', 'abuse', [['SpamComplaint', undefined, undefined]]],
    ['not-spam-arf.eml', 'not-spam', [['OtherFeedback', 'gina@receiver.example.com', undefined]]],
  ])('%s: a %s report gives %j', async (name, feedbackType, verdicts) => {
    const mail = await read(name);
    expect(mail).toMatchObject({ kind: 'Complaint', feedbackType, original: OURS });
    expect(verdictsOf(mail)).toEqual(verdicts);
  });

  it("AOL's redacted report names no address, our message id still", async () => {
    const mail = await read('aol-arf.eml');
    expect(addressesNamedBy(mail)).toEqual([]);
    expect(mail).toMatchObject({ original: { sendlineMessageId: ID } });
  });
});

describe('readReturnedMail: automatic replies and the rest', () => {
  it.each([
    ['rfc3834-auto-replied.eml', 'Auto: Your receipt', 'bob@example.org'],
    ['outlook-out-of-office.eml', 'Automatic reply: Your receipt', 'hannah@example.org'],
    ['german-out-of-office.eml', 'Abwesenheitsnotiz: Ihre Bestellung übersicht', 'ines@example.de'],
  ])('%s is an automatic reply to our message, which suppresses nothing', async (name, subject, recipient) => {
    const mail = await read(name);
    expect(mail).toMatchObject({ kind: 'AutoReply', subject, original: OURS });
    expect(returnedMailVerdicts(mail)).toEqual([
      { kind: 'NoChange', recipient, reason: 'AutomaticReply', suppress: false },
    ]);
  });

  it.each([
    ['human-reply.eml', 'Re: Your receipt'],
    ['junk.eml', 'You have won!'],
  ])('%s is Unrecognized', async (name, subject) => {
    expect(await read(name)).toMatchObject({
      kind: 'Unrecognized',
      reason: 'neither a report, a bounce nor an automatic reply',
      subject,
    });
  });
});

describe('readReturnedMail: our own message, attached to a report', () => {
  const message = acceptedMessage({ subject: 'Ihre Bestellung – Übersicht' });
  const report = (contentType: string, original: Buffer) =>
    Buffer.concat([
      Buffer.from(
        [
          'From: MAILER-DAEMON@mx.example.net',
          'Subject: Undelivered Mail Returned to Sender',
          'Content-Type: multipart/report; report-type=delivery-status; boundary="R"',
          '',
          '--R',
          'Content-Type: message/delivery-status',
          '',
          'Reporting-MTA: dns; mx.example.net',
          '',
          'Final-Recipient: rfc822; ann@example.net',
          'Action: failed',
          'Status: 5.1.1',
          '',
          '--R',
          `Content-Type: ${contentType}`,
          '',
          '',
        ].join('\r\n'),
      ),
      original,
      Buffer.from('\r\n--R--\r\n'),
    ]);

  it('names our message id, from the Message-ID the composer writes (no header of our own is needed)', async () => {
    const composed = await composeMessage(message);
    const mail = await readReturnedMail(report('message/rfc822', composed));
    expect(mail).toMatchObject({
      kind: 'DeliveryReport',
      original: {
        messageId: `<${message.messageId}@shop.example.test>`,
        sendlineMessageId: message.messageId,
        to: 'Ann <ann@example.net>',
        subject: 'Ihre Bestellung – Übersicht',
      },
    });
  });

  it('names it from the headers alone (text/rfc822-headers)', async () => {
    const composed = await composeMessage(message);
    const headers = composed.subarray(0, composed.indexOf('\r\n\r\n') + 2);
    const mail = await readReturnedMail(report('text/rfc822-headers', headers));
    expect(mail).toMatchObject({ original: { sendlineMessageId: message.messageId } });
  });
});

describe('readReturnedMail: at the limits', () => {
  const dsnPart = [
    '--B',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.example.net',
    '',
    'Final-Recipient: rfc822; bob@example.org',
    'Action: failed',
    'Status: 5.1.1',
    '',
  ].join('\r\n');
  const head =
    'From: MAILER-DAEMON@mx.example.net\r\nContent-Type: multipart/report; report-type=delivery-status; boundary="B"\r\n\r\n';

  it('reads a report after 1,000 other parts', async () => {
    const parts = Array.from({ length: 1000 }, (_, i) => `--B\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join(
      '',
    );
    const mail = await readReturnedMail(Buffer.from(`${head}${parts}${dsnPart}--B--\r\n`));
    expect(verdictsOf(mail)).toEqual([['Bounced', 'bob@example.org', 'HardBounce']]);
  });

  it(`refuses more than ${RETURNED_MAIL_LIMITS.maxDelimiterLines} lines that may delimit parts`, async () => {
    const parts = '--B\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nx\r\n'.repeat(10_000);
    const mail = await readReturnedMail(Buffer.from(`${head}${parts}${dsnPart}--B--\r\n`));
    expect(mail).toMatchObject({
      kind: 'Unrecognized',
      reason: expect.stringMatching(/lines that may delimit MIME parts/),
    });
  });

  it(`refuses nesting deeper than ${RETURNED_MAIL_LIMITS.maxNestingDepth} parts`, async () => {
    const depth = 500;
    let body = '';
    for (let i = 0; i < depth; i++) body += `Content-Type: multipart/mixed; boundary="n${i}"\r\n\r\n--n${i}\r\n`;
    body += 'Content-Type: text/plain\r\n\r\n<bob@example.org>: 550 5.1.1 unknown\r\n';
    for (let i = depth - 1; i >= 0; i--) body += `--n${i}--\r\n`;
    const mail = await readReturnedMail(Buffer.from(`From: MAILER-DAEMON@mx.example.net\r\n${body}`));
    expect(mail).toMatchObject({ kind: 'Unrecognized', reason: expect.stringMatching(/nesting depth/) });
  });

  it('reads a message nested a few levels, as reports are', async () => {
    const mail = await read('gmail-dsn.eml');
    expect(mail.kind).toBe('DeliveryReport');
  });

  it(`refuses more than ${RETURNED_MAIL_LIMITS.maxHeaderBytes} bytes of headers`, async () => {
    const mail = await readReturnedMail(
      Buffer.from(`From: a@b.example\r\nX-Big: ${'a'.repeat(1024 * 1024)}\r\n\r\nbody`),
    );
    expect(mail).toMatchObject({ kind: 'Unrecognized', reason: expect.stringMatching(/header size/) });
  });

  it(`reads the report of a message longer than ${RETURNED_MAIL_LIMITS.maxBytes} bytes: only the original's body is cut`, async () => {
    const original = `--B\r\nContent-Type: message/rfc822\r\n\r\nMessage-ID: <${ID}@shop.example.test>\r\n\r\n${'x'.repeat(RETURNED_MAIL_LIMITS.maxBytes)}\r\n`;
    const mail = await readReturnedMail(Buffer.from(`${head}${dsnPart}${original}--B--\r\n`));
    expect(mail).toMatchObject({ kind: 'DeliveryReport', original: { sendlineMessageId: ID } });
  });

  it('reads a report whose text is in a charset nobody knows, and whose report has 8-bit garbage', async () => {
    const raw = Buffer.concat([
      Buffer.from(
        `${head}--B\r\nContent-Type: text/plain; charset=x-nobody-knows\r\n\r\n\xff\xfe garbage\r\n`,
        'latin1',
      ),
      Buffer.from(
        '--B\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; \xff\xc3\x28\r\n\r\n',
        'latin1',
      ),
      Buffer.from('Final-Recipient: rfc822; bob@example.org\r\nAction: failed\r\nStatus: 5.2.2\r\n--B--\r\n', 'latin1'),
    ]);
    expect(verdictsOf(await readReturnedMail(raw))).toEqual([['Bounced', 'bob@example.org', 'SoftBounce']]);
  });

  it('calls a report without recipients, an empty message and noise Unrecognized', async () => {
    const noRecipients = `${head}--B\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example.net\r\n--B--\r\n`;
    expect(await readReturnedMail(Buffer.from(noRecipients))).toMatchObject({
      kind: 'Unrecognized',
      reason: 'a delivery report that names no recipient',
    });
    expect(await readReturnedMail(Buffer.alloc(0))).toEqual({ kind: 'Unrecognized', reason: 'an empty message' });
    expect((await readReturnedMail(Buffer.from([0, 255, 13, 10, 13, 10, 1, 2, 0]))).kind).toBe('Unrecognized');
  });
});

describe('textOfHtml', () => {
  it('drops tags, breaks lines where the HTML does, decodes entities', () => {
    expect(
      textOfHtml('<p>Your message to <a href="mailto:b@x">b@x</a> couldn&#39;t</p><p>550&nbsp;5.1.1 &lt;b@x&gt;</p>'),
    ).toBe("\nYour message to b@x couldn't\n\n550 5.1.1 <b@x>\n");
  });

  it('drops style, script and head with what they hold', () => {
    expect(textOfHtml('<head><title>t</title></head><style>p{color:#550000}</style><script>x()</script>text')).toBe(
      'text',
    );
  });

  it('keeps a < with no > after it as text, and an entity it does not know', () => {
    expect(textOfHtml('a <b>c</b> 1 < 2 &bogus; &#x110000;')).toBe('a c 1 < 2 &bogus; &#x110000;');
    expect(textOfHtml('<'.repeat(100_000))).toHaveLength(100_000);
  });
});

function fixtureNames(): string[] {
  return readdirSync(FIXTURES).filter((name) => name.endsWith('.eml'));
}
