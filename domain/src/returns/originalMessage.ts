import type { MessageHeader } from '../validation/outboundMessage';
import { addressOfField, headerValue, shownHeader } from './fields';
import type { OriginalMessage } from './types';

/**
 * What a report tells of the message it is about, from that message's headers (the attached message/rfc822 or
 * text/rfc822-headers part), or, for an automatic reply that attaches nothing, from its In-Reply-To / References.
 *
 * Our own message id is read from the Message-ID we write: `<{message id}@{From domain}>` (infra's compose.ts),
 * where the message id is a UUID. A request cannot set Message-ID (it is a reserved header), so a Message-ID whose
 * local part is a UUID names one of our messages — or a message someone else wrote in the same shape: the consumer
 * matches a report by its signed return-path token first, and this id only helps when a report comes back without
 * it.
 */

const SENDLINE_MESSAGE_ID = /^<?\s*([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@[^@\s>]+\s*>?$/i;
const MESSAGE_ID = /<[^<>\s]+>/g;

/** Our message id (lowercase) named by a Message-ID value, or undefined when it is not of the shape we write. */
export function sendlineMessageIdOf(messageId: string): string | undefined {
  return SENDLINE_MESSAGE_ID.exec(messageId.trim())?.[1]?.toLowerCase();
}

function withIds(messageId: string | undefined): Pick<OriginalMessage, 'messageId' | 'sendlineMessageId'> {
  if (messageId === undefined || messageId === '') return {};
  const sendlineMessageId = sendlineMessageIdOf(messageId);
  return { messageId, ...(sendlineMessageId !== undefined && { sendlineMessageId }) };
}

/** The original message as its headers tell it; every field is left out when its header is absent or empty. */
export function originalMessageOf(headers: readonly MessageHeader[]): OriginalMessage {
  const messageId = shownHeader(headerValue(headers, 'message-id'));
  const returnPath = headerValue(headers, 'return-path');
  const returnPathAddress = returnPath === undefined ? undefined : addressOfField(returnPath);
  const to = shownHeader(headerValue(headers, 'to'));
  const subject = shownHeader(headerValue(headers, 'subject'));
  return {
    ...withIds(messageId),
    ...(returnPathAddress !== undefined && { returnPath: returnPathAddress }),
    ...(to !== undefined && { to }),
    ...(subject !== undefined && { subject }),
  };
}

/**
 * The message a reply answers, from the reply's own headers: In-Reply-To's first message id, else the last one of
 * References (the parent, RFC 5322 §3.6.4).
 */
export function repliedMessageOf(headers: readonly MessageHeader[]): OriginalMessage {
  const inReplyTo = headerValue(headers, 'in-reply-to')?.match(MESSAGE_ID)?.[0];
  const references = headerValue(headers, 'references')?.match(MESSAGE_ID);
  return withIds(inReplyTo ?? references?.[references.length - 1]);
}
