import { createHash, createPrivateKey, type KeyObject } from 'node:crypto';
import { addressDomain, canonicalAddress, type MessageAcceptedData } from '@sendline/domain';
import MailComposer from 'nodemailer/lib/mail-composer';
import type MimeNode from 'nodemailer/lib/mime-node';
import { InfrastructureError } from '../errors';
import { mimeBytesAtOnce } from './mimeBytes';

/**
 * Composing a message is apart from sending it (nodemailer's habit): `composeMessage` turns an accepted
 * message into its MIME bytes with nodemailer's MailComposer, `signMessage` (dkimSignature.ts) adds the DKIM-Signature,
 * and a transport sends the bytes as they are (`raw`) to an envelope of our own.
 *
 * What the composed message carries:
 * - From, To, Cc, Reply-To, Subject as accepted; Bcc is never written into the headers (its recipients
 *   are only in the envelope);
 * - Message-ID `<messageId@fromDomain>`: the same on every attempt, so a receiver can deduplicate;
 * - Date: when the API accepted the message (also the same on every attempt);
 * - MIME boundaries derived from the message id (nodemailer's default is random): the same message composes to the
 *   same bytes every time, so the API can show a message's source (`GET /messages/outbound/{id}/dump`) by composing
 *   it again;
 * - the custom headers in their order;
 * - text and HTML bodies (multipart/alternative when both), attachments (multipart/mixed), and
 *   attachments with a ContentID as inline parts next to the HTML (multipart/related), referenced
 *   from the HTML as `cid:<ContentID>` (a leading "cid:" in the ContentID is accepted and dropped).
 */

export interface Envelope {
  from: string;
  /** Every active recipient, as the request spelt it (To, Cc, Bcc), keyed by canonical address. */
  to: string[];
}

/** The Message-ID header value of a message: `<messageId@fromDomain>`. */
export function messageIdHeader(message: Pick<MessageAcceptedData, 'messageId' | 'from'>): string {
  return `<${message.messageId}@${addressDomain(message.from.email)}>`;
}

/**
 * The spelling of each canonical recipient as the request gave it (the local part of an address may be
 * case-sensitive at the receiving server: we keep what the sender wrote).
 */
export function recipientSpellings(message: Pick<MessageAcceptedData, 'to' | 'cc' | 'bcc'>): Map<string, string> {
  const spellings = new Map<string, string>();
  for (const mailbox of [...message.to, ...message.cc, ...message.bcc]) {
    const canonical = canonicalAddress(mailbox.email);
    if (!spellings.has(canonical)) spellings.set(canonical, mailbox.email.trim());
  }
  return spellings;
}

function contentIdOf(contentId: string): string {
  return contentId.replace(/^cid:/i, '');
}

/** The shared part of a message's MIME boundaries: 16 hex digits of its id's hash (unknown to whoever wrote the body). */
function boundaryOf(messageId: string): string {
  return createHash('sha256').update(`mime-boundary\0${messageId}`).digest('hex').slice(0, 16);
}

/** The message's MIME tree, compiled by nodemailer's MailComposer, not yet written. */
export function mimeTreeOf(message: MessageAcceptedData): MimeNode {
  const mailbox = (m: { email: string; name?: string }) => ({ address: m.email, name: m.name ?? '' });
  const composer = new MailComposer({
    from: mailbox(message.from),
    to: message.to.map(mailbox),
    ...(message.cc.length > 0 && { cc: message.cc.map(mailbox) }),
    ...(message.replyTo.length > 0 && { replyTo: message.replyTo.map(mailbox) }),
    subject: message.subject,
    messageId: messageIdHeader(message),
    date: new Date(message.submittedAt),
    headers: message.headers.map((header) => ({ key: header.name, value: header.value })),
    ...(message.textBody !== undefined && { text: message.textBody }),
    ...(message.htmlBody !== undefined && { html: message.htmlBody }),
    attachments: message.attachments.map((attachment) => ({
      filename: attachment.name,
      content: attachment.content,
      encoding: 'base64',
      contentType: attachment.contentType,
      ...(attachment.contentId !== undefined && { cid: contentIdOf(attachment.contentId) }),
    })),
    // Only what the request gave: no file paths, no URLs are ever read while composing.
    disableFileAccess: true,
    disableUrlAccess: true,
    newline: 'win',
    baseBoundary: boundaryOf(message.messageId),
  });
  const node = composer.compile();
  node.keepBcc = false;
  return node;
}

/**
 * The message's bytes. A tree held in memory, as every accepted message is, is written at once (mimeBytes.ts); one
 * it cannot write that way is streamed by nodemailer. Both give the same bytes.
 */
export async function composeMessage(message: MessageAcceptedData): Promise<Buffer> {
  try {
    // A tree the writer gave up on had some of its headers built: nodemailer streams a tree compiled afresh.
    return mimeBytesAtOnce(mimeTreeOf(message)) ?? (await mimeTreeOf(message).build());
  } catch (cause) {
    throw new InfrastructureError(
      'ComposeFailed',
      `message ${message.messageId} could not be composed: ${String(cause)}`,
      {
        // The same input composes the same way: trying again cannot help.
        retriable: false,
        cause,
      },
    );
  }
}

/** A domain's DKIM signing key. */
export interface DkimSigningKey {
  domainName: string;
  keySelector: string;
  privateKey: KeyObject;
}

export function dkimSigningKey(domainName: string, keySelector: string, privateKeyPem: string): DkimSigningKey {
  try {
    return { domainName, keySelector, privateKey: createPrivateKey(privateKeyPem) };
  } catch (cause) {
    throw new InfrastructureError('BadDkimKey', `the DKIM private key of ${domainName} is not a valid key`, {
      retriable: false,
      cause,
    });
  }
}

/** The SMTP envelope of an accepted message for some of its (canonical) recipients. */
export function envelopeOf(message: MessageAcceptedData, recipients: readonly string[]): Envelope {
  const spellings = recipientSpellings(message);
  return { from: message.from.email, to: recipients.map((recipient) => spellings.get(recipient) ?? recipient) };
}
