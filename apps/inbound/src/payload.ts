import EmailReplyParser from 'email-reply-parser';
import { domainOfAddress, inboundRecipientOf, mailboxHashOf } from '@sendline/domain';
import type { InboundAuthentication, InboundMailbox, ParsedInboundMail } from '@sendline/infra';

/**
 * Postmark's inbound JSON of one message (its field names and shapes: the `postmark` client's InboundWebhook), what
 * is POSTed to the organization's InboundHookUrl and shown by GET /messages/inbound/{id}/details.
 *
 * Where Postmark's documentation is silent we chose (docs/inbound.md):
 * - MessageID is our inbound message's id; the message's own Message-ID is among Headers.
 * - Headers are every header but those broken out (From, To, Cc, Bcc, Reply-To, Subject, Date) and the top-level
 *   Content-Type / Content-Transfer-Encoding, after a Return-Path with the envelope sender (what a receiving server
 *   adds at final delivery, RFC 5321 4.4, and the first header of Postmark's payloads, where django-anymail reads
 *   the envelope sender; one the message carried is dropped) and the Authentication-Results (and Received-SPF) of
 *   our checks.
 * - Tag is the message's X-PM-Tag header, as Postmark sets it on outbound mail.
 * - No spam score is computed (no X-Spam-* headers are made up).
 * - Attachments are kept while the JSON stays under MAX_PAYLOAD_BYTES; one that does not fit is listed with an empty
 *   Content and its real ContentLength, and the X-Sendline-Attachments-Omitted header names it. RawEmail (when the
 *   organization asked for it) likewise, after the attachments.
 */

export const MAX_PAYLOAD_BYTES = 15 * 1024 * 1024;

export interface InboundRecipientJson {
  Email: string;
  Name: string;
  MailboxHash: string;
}

export interface InboundPayload {
  From: string;
  FromName: string;
  FromFull: InboundRecipientJson;
  To: string;
  ToFull: InboundRecipientJson[];
  Cc: string;
  CcFull: InboundRecipientJson[];
  Bcc: string;
  BccFull: InboundRecipientJson[];
  OriginalRecipient: string;
  ReplyTo: string;
  Subject: string;
  MessageID: string;
  Date: string;
  MailboxHash: string;
  TextBody: string;
  HtmlBody: string;
  StrippedTextReply: string;
  Tag: string;
  Headers: { Name: string; Value: string }[];
  Attachments: { Name: string; Content: string; ContentType: string; ContentLength: number; ContentID: string }[];
  RawEmail?: string;
  MessageStream: 'inbound';
}

export interface PayloadInput {
  messageId: string;
  mail: ParsedInboundMail;
  authentication: InboundAuthentication;
  raw: Uint8Array;
  envelopeFrom: string;
  /** The envelope recipient it came to (an inbound address). */
  originalRecipient: string;
  inboundDomain: string;
  /** The organization's own verified inbound domain: any address there has a MailboxHash after its `+`. */
  ownDomain?: string;
  rawEmailEnabled: boolean;
}

const BROKEN_OUT = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'date',
  'content-type',
  'content-transfer-encoding',
]);

const replyParser = new EmailReplyParser();

/** The MailboxHash of an address: at the service's inbound domain after the hash's `+`, at the own domain after `+`. */
function mailboxHash(address: string, inboundDomain: string, ownDomain: string | undefined): string {
  const atService = inboundRecipientOf(address, inboundDomain);
  if (atService) return atService.mailboxHash;
  return ownDomain && domainOfAddress(address) === ownDomain ? mailboxHashOf(address) : '';
}

function recipient(mailbox: InboundMailbox, inboundDomain: string, ownDomain?: string): InboundRecipientJson {
  return {
    Email: mailbox.address,
    Name: mailbox.name,
    MailboxHash: mailboxHash(mailbox.address, inboundDomain, ownDomain),
  };
}

/** Postmark's form of a list: `"Name" <address>` or the bare address, comma-separated. */
function listOf(mailboxes: readonly InboundMailbox[]): string {
  return mailboxes.map((m) => (m.name ? `"${m.name.replace(/["\\]/g, '\\$&')}" <${m.address}>` : m.address)).join(', ');
}

/** The reply above the quoted text, by email-reply-parser; the whole text when it finds nothing to strip. */
export function strippedReply(text: string): string {
  if (text === '') return '';
  try {
    return replyParser.parseReply(text.slice(0, 256 * 1024)).trimEnd();
  } catch {
    return text;
  }
}

export function inboundPayloadOf(input: PayloadInput): InboundPayload {
  const { mail, inboundDomain, ownDomain } = input;
  const from: InboundMailbox = mail.from ?? { name: '', address: input.envelopeFrom };
  const headers = [
    { name: 'Return-Path', value: `<${input.envelopeFrom}>` },
    ...input.authentication.headers,
    ...mail.headers.filter(
      (header) => !BROKEN_OUT.has(header.name.toLowerCase()) && header.name.toLowerCase() !== 'return-path',
    ),
  ].map((header) => ({ Name: header.name, Value: header.value }));
  if (mail.unparsed !== undefined) headers.push({ Name: 'X-Sendline-Unparsed', Value: mail.unparsed });
  const tag = mail.headers.find((header) => header.name.toLowerCase() === 'x-pm-tag')?.value ?? '';
  const payload: InboundPayload = {
    From: from.address,
    FromName: from.name,
    FromFull: { Email: from.address, Name: from.name, MailboxHash: '' },
    To: listOf(mail.to),
    ToFull: mail.to.map((m) => recipient(m, inboundDomain, ownDomain)),
    Cc: listOf(mail.cc),
    CcFull: mail.cc.map((m) => recipient(m, inboundDomain, ownDomain)),
    Bcc: listOf(mail.bcc),
    BccFull: mail.bcc.map((m) => recipient(m, inboundDomain, ownDomain)),
    OriginalRecipient: input.originalRecipient,
    ReplyTo: mail.replyTo.map((m) => m.address).join(', '),
    Subject: mail.subject,
    MessageID: input.messageId,
    Date: mail.date,
    MailboxHash: mailboxHash(input.originalRecipient, inboundDomain, ownDomain),
    TextBody: mail.text,
    HtmlBody: mail.html,
    StrippedTextReply: strippedReply(mail.text),
    Tag: tag,
    Headers: headers,
    Attachments: [],
    MessageStream: 'inbound',
  };
  // The budget: what is left once everything but the attachments (and RawEmail) is written.
  let left = MAX_PAYLOAD_BYTES - Buffer.byteLength(JSON.stringify(payload));
  const omitted: string[] = [];
  for (const attachment of mail.attachments) {
    const encodedLength = Math.ceil(attachment.content.byteLength / 3) * 4;
    const fits = encodedLength + 200 <= left;
    if (fits) left -= encodedLength + 200;
    else omitted.push(attachment.name || '(unnamed)');
    payload.Attachments.push({
      Name: attachment.name,
      Content: fits ? Buffer.from(attachment.content).toString('base64') : '',
      ContentType: attachment.contentType,
      ContentLength: attachment.content.byteLength,
      ContentID: attachment.contentId,
    });
  }
  if (input.rawEmailEnabled) {
    const raw = Buffer.from(input.raw.buffer, input.raw.byteOffset, input.raw.byteLength).toString('utf8');
    if (Buffer.byteLength(JSON.stringify(raw)) <= left) payload.RawEmail = raw;
    else omitted.push('RawEmail');
  }
  if (omitted.length > 0) {
    payload.Headers.push({ Name: 'X-Sendline-Attachments-Omitted', Value: omitted.join(', ') });
  }
  return payload;
}
