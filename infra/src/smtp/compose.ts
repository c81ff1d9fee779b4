import { createHash, createPrivateKey, type KeyObject } from 'node:crypto';
import { addressDomain, canonicalAddress, type MessageAcceptedData } from '@sendline/domain';
import MailComposer from 'nodemailer/lib/mail-composer';
import type MimeNode from 'nodemailer/lib/mime-node';
import { InfrastructureError } from '../errors';
import { returnPathAddress } from '../crypto/returnPathToken';
import { mimeBytesAtOnce } from './mimeBytes';

/**
 * Composing a message is apart from sending it (nodemailer's habit): `composeMessage` turns an accepted
 * message into its MIME bytes with nodemailer's MailComposer, `signMessage` (dkimSignature.ts) adds the DKIM-Signature,
 * and a transport sends the bytes as they are (`raw`) to an envelope of our own: one recipient at a time, each with
 * its own envelope sender (`returnPathOf`), while the bytes and their signature are the message's, once.
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
  /** MAIL FROM: the envelope sender, where bounces go (the Return-Path the receiver stamps). */
  from: string;
  /** RCPT TO: the recipients, as the request spelt them (To, Cc, Bcc). */
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

/** The SMTP envelope of an accepted message for some of its (canonical) recipients, with the envelope sender `from`. */
export function envelopeOf(message: MessageAcceptedData, recipients: readonly string[], from: string): Envelope {
  const spellings = recipientSpellings(message);
  return { from, to: recipients.map((recipient) => spellings.get(recipient) ?? recipient) };
}

/** Where a recipient's bounces go: the key of the tokens and the return-path domain (the From domain's, or ours). */
export interface ReturnPathSettings {
  /** returnPathKey(the service's secret key). */
  key: Buffer;
  domain: string;
}

/**
 * The envelope sender of one recipient of a message: `b.<token>@<return-path domain>`, the token naming the message
 * and the recipient's index among its active recipients (crypto/returnPathToken.ts), so that a bounce or a
 * complaint sent back to it says which delivery it is about. Throws for an address that is not an active recipient.
 */
export function returnPathOf(
  message: Pick<MessageAcceptedData, 'messageId' | 'activeRecipients'>,
  recipient: string,
  returnPath: ReturnPathSettings,
): string {
  const canonical = canonicalAddress(recipient);
  const recipientIndex = message.activeRecipients.findIndex((active) => canonicalAddress(active) === canonical);
  if (recipientIndex < 0) {
    throw new InfrastructureError(
      'NotARecipient',
      `${recipient} is not an active recipient of message ${message.messageId}: no return path for it`,
      { retriable: false },
    );
  }
  return returnPathAddress(returnPath.key, { messageId: message.messageId, recipientIndex }, returnPath.domain);
}
