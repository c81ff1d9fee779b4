/**
 * The test and development mail server's reports after a 250 (infra/src/smtp/addressAnswers.ts): `bouncelater…`
 * is accepted and then bounced with a DSN, `spamcomplaint…` accepted and then complained about with an ARF report,
 * each sent from `<>` to the message's envelope sender through our MX, which records it in mail.received. Real
 * Kafka, registry and Redis; the mail servers on loopback.
 */
import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  returnPathAddress,
  returnPathKey,
  TestMailServer,
  type AccountsView,
  type EventStore,
  type SentReport,
} from '@sendline/infra';
import type { MxServer } from '@sendline/mx';
import { deleteTopicsAndDisconnect, eventually, freshEventStore } from '../support/services';
import { accountsWithDomains, randomSecretKey, receivedOn, startTestMx } from './support';

const secretKey = randomSecretKey();
const key = returnPathKey(secretKey);

/** The parts of a multipart message: each part's header block and body, as bytes read as latin1. */
function partsOf(raw: Buffer): { contentType: string; parts: { headers: string; body: string }[] } {
  const text = raw.toString('latin1');
  const head = text.slice(0, text.indexOf('\r\n\r\n'));
  const contentType = /^content-type:\s*(.*(?:\r\n[ \t].*)*)/im.exec(head)?.[1]?.replace(/\r\n[ \t]+/g, ' ') ?? '';
  const boundary = /boundary="?([^";]+)"?/.exec(contentType)?.[1];
  if (!boundary) return { contentType, parts: [] };
  const sections = text.split(`\r\n--${boundary}`);
  const parts = sections.slice(1, -1).map((section) => {
    const body = section.slice(2); // the CRLF after the delimiter
    const end = body.indexOf('\r\n\r\n');
    return { headers: body.slice(0, end + 2), body: body.slice(end + 4) };
  });
  return { contentType, parts };
}

function originalMessage(messageId: string, to: string): Buffer {
  return Buffer.from(
    `From: Shop <billing@shop.example>\r\nTo: <${to}>\r\nSubject: Your invoice ${messageId}\r\n` +
      `Message-ID: <${messageId}@shop.example>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n` +
      `Hello\r\n`,
  );
}

describe('the development mail server’s bounce-later and complaint modes, through our MX', () => {
  let store: EventStore;
  let accounts: AccountsView;
  let cleanupAccounts: () => Promise<void>;
  let mx: MxServer;
  let mail: TestMailServer;
  const reports: SentReport[] = [];

  beforeAll(async () => {
    store = await freshEventStore('mx-dev-modes');
    ({ accounts, cleanup: cleanupAccounts } = await accountsWithDomains('shop.example'));
    mx = await startTestMx({ store, accounts, secretKey });
    mail = await new TestMailServer({
      tls: false,
      verifyDkim: false,
      name: 'mx.customer.example',
      reports: { mx: mx.address, delayMs: 100, onReport: (report) => reports.push(report) },
    }).start();
  });

  afterAll(async () => {
    await mail?.stop();
    await mx?.stop();
    await cleanupAccounts?.();
    if (store) await deleteTopicsAndDisconnect(store);
  });

  async function send(envelopeFrom: string, to: string[], raw: Buffer) {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: mail.port,
      secure: false,
      ignoreTLS: true,
    });
    try {
      return await transport.sendMail({ envelope: { from: envelopeFrom, to }, raw });
    } finally {
      transport.close();
    }
  }

  async function recordTo(address: string) {
    return eventually(
      async () => (await receivedOn(store)).find((record) => record.event.data.envelopeTo.includes(address)),
      20_000,
      `a MailReceived for ${address}`,
    );
  }

  it('accepts bouncelater… with 250, then sends a DSN from <> to the envelope sender', async () => {
    const messageId = randomUUID();
    const returnPath = returnPathAddress(key, { messageId, recipientIndex: 0 }, 'bounces.shop.example');
    const raw = originalMessage(messageId, 'bouncelater-1@customer.example');
    const sent = await send(returnPath, ['bouncelater-1@customer.example', 'ok@customer.example'], raw);
    expect(sent.accepted).toEqual(['bouncelater-1@customer.example', 'ok@customer.example']);

    const { event, key: recordKey } = await recordTo(returnPath);
    expect(event.data.envelopeFrom).toBe('');
    expect(event.data.envelopeTo).toEqual([returnPath]);
    expect(event.data.heloName).toBe('mx.customer.example');
    expect(recordKey).toBe(messageId);

    const dsn = partsOf(Buffer.from(event.data.raw));
    expect(dsn.contentType).toMatch(/^multipart\/report; report-type=delivery-status;/);
    expect(dsn.parts.map((part) => /content-type:\s*([^;\r\n]+)/i.exec(part.headers)?.[1])).toEqual([
      'text/plain',
      'message/delivery-status',
      'text/rfc822-headers',
    ]);
    const status = dsn.parts[1]!.body;
    expect(status).toMatch(/^Reporting-MTA: dns; mx\.customer\.example\r\n/m);
    expect(status).toMatch(/^Final-Recipient: rfc822; bouncelater-1@customer\.example\r\n/m);
    expect(status).toMatch(/^Action: failed\r\n/m);
    expect(status).toMatch(/^Status: 5\.1\.1\r\n/m);
    expect(status).toMatch(/^Diagnostic-Code: smtp; 550 5\.1\.1 <bouncelater-1@customer\.example>: user unknown\r\n/m);
    // Only the recipient that bounced is reported.
    expect(status).not.toMatch(/ok@customer\.example/);
    const headers = dsn.parts[2]!.body;
    expect(headers).toContain(`Message-ID: <${messageId}@shop.example>`);
    expect(headers).toContain(`Subject: Your invoice ${messageId}`);
    expect(headers).not.toContain('Hello');
    expect(Buffer.from(event.data.raw).toString('latin1')).toMatch(/^From: Mail Delivery System <MAILER-DAEMON@/m);
  });

  it('accepts spamcomplaint… with 250, then sends an ARF abuse report with the original message', async () => {
    const messageId = randomUUID();
    const returnPath = returnPathAddress(key, { messageId, recipientIndex: 1 }, 'bounces.sendline.dev');
    const raw = originalMessage(messageId, 'spamcomplaint@customer.example');
    await send(returnPath, ['spamcomplaint@customer.example'], raw);

    const { event, key: recordKey } = await recordTo(returnPath);
    expect(event.data.envelopeFrom).toBe('');
    expect(recordKey).toBe(messageId);

    const arf = partsOf(Buffer.from(event.data.raw));
    expect(arf.contentType).toMatch(/^multipart\/report; report-type=feedback-report;/);
    expect(arf.parts.map((part) => /content-type:\s*([^;\r\n]+)/i.exec(part.headers)?.[1])).toEqual([
      'text/plain',
      'message/feedback-report',
      'message/rfc822',
    ]);
    const feedback = arf.parts[1]!.body;
    expect(feedback).toMatch(/^Feedback-Type: abuse\r\n/m);
    expect(feedback).toMatch(/^User-Agent: \S+/m);
    expect(feedback).toMatch(/^Version: 1\r\n/m);
    expect(feedback).toContain(`Original-Mail-From: <${returnPath}>`);
    expect(feedback).toMatch(/^Original-Rcpt-To: <spamcomplaint@customer\.example>\r\n/m);
    expect(feedback).toMatch(/^Arrival-Date: \w{3}, \d{2} \w{3} \d{4} /m);
    // The original as the complaining mailbox received it, byte for byte.
    expect(Buffer.from(arf.parts[2]!.body, 'latin1').equals(raw)).toBe(true);
  });

  it('sends no report about a message that came from <> (no report about a report)', async () => {
    const before = mail.reportsSent;
    await send('', ['bouncelater-2@customer.example'], originalMessage(randomUUID(), 'bouncelater-2@customer.example'));
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(mail.reportsSent).toBe(before);
    expect(reports.every((report) => report.error === undefined)).toBe(true);
  });
});
