/**
 * The reports a test or development mail server sends back after it accepted a message (addressAnswers.ts:
 * `bouncelater…`, `spamcomplaint…`), built as real servers build them, so that what reads mail.received is tested
 * against the real formats:
 *
 * - a delivery status notification (RFC 3464, RFC 6522): `multipart/report; report-type=delivery-status` with a
 *   human part, a `message/delivery-status` part (Reporting-MTA, Arrival-Date; per recipient Final-Recipient,
 *   Action: failed, Status 5.1.1, Diagnostic-Code) and the original message's header as `text/rfc822-headers`;
 * - an abuse report of a feedback loop (ARF, RFC 5965): `multipart/report; report-type=feedback-report` with a
 *   human part, a `message/feedback-report` part (Feedback-Type: abuse, User-Agent, Version: 1, Original-Mail-From,
 *   Original-Rcpt-To, Arrival-Date, Reporting-MTA, Source-IP) and the original message as `message/rfc822`.
 *
 * Pure: the boundary, the Message-ID and the dates come from the caller. Lines end in CRLF.
 */

export interface ReportIdentity {
  /** The reporting server's host name (Reporting-MTA, the From's domain). */
  reportingMta: string;
  /** The report's own Message-ID, without angle brackets. */
  messageId: string;
  /** Its multipart boundary. */
  boundary: string;
  /** When it is written (its Date header). */
  date: Date;
}

/** What the reporting server knew of the original message when it accepted it. */
export interface OriginalMessage {
  /** Its envelope sender: where the report goes (a VERP return path). */
  envelopeFrom: string;
  /** When it arrived. */
  arrivalDate: Date;
  /** The address of the server that delivered it. */
  sourceIp: string;
  /** The message as received. */
  raw: Buffer;
}

export interface FailedRecipient {
  address: string;
  /** RFC 3463 status, e.g. 5.1.1. */
  status: string;
  /** The SMTP answer that stands for the failure, e.g. `550 5.1.1 <a@b>: user unknown`. */
  diagnostic: string;
}

const CRLF = '\r\n';

/** The header block of a message (up to its first empty line), without that empty line. */
export function headerBlockOf(raw: Buffer): Buffer {
  const end = raw.indexOf('\r\n\r\n');
  if (end >= 0) return raw.subarray(0, end + 2);
  const bare = raw.indexOf('\n\n');
  return bare >= 0 ? raw.subarray(0, bare + 1) : raw;
}

/** Whether a part needs `8bit` (a byte above 127) rather than `7bit`. */
function transferEncoding(bytes: Buffer): '7bit' | '8bit' {
  return bytes.some((byte) => byte > 127) ? '8bit' : '7bit';
}

function header(name: string, value: string): string {
  return `${name}: ${value}${CRLF}`;
}

/** An RFC 5322 date, e.g. `Sat, 28 Nov 2026 17:13:21 +0000`. */
function dateOf(date: Date): string {
  return date.toUTCString().replace('GMT', '+0000');
}

/**
 * A whole multipart/report message of `reportType`, its parts given as [headers, body]. Each delimiter starts with
 * its own CRLF (RFC 2046: the CRLF before `--boundary` belongs to the delimiter), so a part's body is exactly the
 * bytes given, its last line break included: an attached original message comes out byte for byte.
 */
function multipartReport(
  identity: ReportIdentity,
  top: { from: string; to: string; subject: string; reportType: string },
  parts: Array<[string, Buffer]>,
): Buffer {
  const eightBit = parts.some(([, body]) => transferEncoding(body) === '8bit');
  const head =
    header('From', top.from) +
    header('To', `<${top.to}>`) +
    header('Subject', top.subject) +
    header('Date', dateOf(identity.date)) +
    header('Message-ID', `<${identity.messageId}>`) +
    header('Auto-Submitted', 'auto-replied') +
    header('MIME-Version', '1.0') +
    header('Content-Type', `multipart/report; report-type=${top.reportType}; boundary="${identity.boundary}"`) +
    (eightBit ? header('Content-Transfer-Encoding', '8bit') : '') +
    CRLF +
    `This is a MIME-encapsulated message.${CRLF}`;
  const chunks: Buffer[] = [Buffer.from(head, 'utf8')];
  for (const [partHeaders, body] of parts) {
    chunks.push(Buffer.from(`${CRLF}--${identity.boundary}${CRLF}${partHeaders}${CRLF}`, 'utf8'));
    chunks.push(body);
  }
  chunks.push(Buffer.from(`${CRLF}--${identity.boundary}--${CRLF}`, 'utf8'));
  return Buffer.concat(chunks);
}

/** A DSN saying each of `recipients` failed for good (a bounce after the 250). */
export function deliveryStatusNotification(
  identity: ReportIdentity,
  original: OriginalMessage,
  recipients: FailedRecipient[],
): Buffer {
  const human =
    `This is the mail system at host ${identity.reportingMta}.${CRLF}${CRLF}` +
    `I'm sorry to have to inform you that your message could not be delivered to one or more recipients.${CRLF}` +
    `The headers of your message are attached below.${CRLF}${CRLF}` +
    recipients.map((r) => `<${r.address}>: ${r.diagnostic}${CRLF}`).join('');
  const perMessage =
    header('Reporting-MTA', `dns; ${identity.reportingMta}`) + header('Arrival-Date', dateOf(original.arrivalDate));
  const perRecipient = recipients.map(
    (r) =>
      header('Final-Recipient', `rfc822; ${r.address}`) +
      header('Original-Recipient', `rfc822; ${r.address}`) +
      header('Action', 'failed') +
      header('Status', r.status) +
      header('Diagnostic-Code', `smtp; ${r.diagnostic}`),
  );
  const status = [perMessage, ...perRecipient].join(CRLF);
  const headers = headerBlockOf(original.raw);
  return multipartReport(
    identity,
    {
      from: `Mail Delivery System <MAILER-DAEMON@${identity.reportingMta}>`,
      to: original.envelopeFrom,
      subject: 'Undelivered Mail Returned to Sender',
      reportType: 'delivery-status',
    },
    [
      [
        header('Content-Type', 'text/plain; charset=utf-8') + header('Content-Description', 'Notification'),
        Buffer.from(human),
      ],
      [
        header('Content-Type', 'message/delivery-status') + header('Content-Description', 'Delivery report'),
        Buffer.from(status),
      ],
      [
        header('Content-Type', 'text/rfc822-headers') +
          header('Content-Description', 'Undelivered Message Headers') +
          header('Content-Transfer-Encoding', transferEncoding(headers)),
        headers,
      ],
    ],
  );
}

/** An ARF abuse report: `recipient` marked the message as spam (a feedback loop's complaint). */
export function abuseReport(
  identity: ReportIdentity,
  original: OriginalMessage,
  recipient: string,
  userAgent = 'SendlineTestMailServer/1.0',
): Buffer {
  const human =
    `This is an email abuse report for an email message received from IP ${original.sourceIp} on ` +
    `${dateOf(original.arrivalDate)}.${CRLF}` +
    `The recipient marked it as spam.${CRLF}`;
  const feedback =
    header('Feedback-Type', 'abuse') +
    header('User-Agent', userAgent) +
    header('Version', '1') +
    header('Original-Mail-From', `<${original.envelopeFrom}>`) +
    header('Original-Rcpt-To', `<${recipient}>`) +
    header('Arrival-Date', dateOf(original.arrivalDate)) +
    header('Reporting-MTA', `dns; ${identity.reportingMta}`) +
    header('Source-IP', original.sourceIp);
  return multipartReport(
    identity,
    {
      from: `Feedback Loop <fbl@${identity.reportingMta}>`,
      to: original.envelopeFrom,
      subject: 'Abuse report',
      reportType: 'feedback-report',
    },
    [
      [header('Content-Type', 'text/plain; charset=utf-8'), Buffer.from(human)],
      [header('Content-Type', 'message/feedback-report'), Buffer.from(feedback)],
      [
        header('Content-Type', 'message/rfc822') +
          header('Content-Disposition', 'inline') +
          header('Content-Transfer-Encoding', transferEncoding(original.raw)),
        original.raw,
      ],
    ],
  );
}
