import type {
  MessageAutoReplied,
  MessageDelayReported,
  MessageHardBounced,
  MessagePolicyRejected,
  MessageSoftBounced,
  MessageSpamComplaint,
} from './message';

/**
 * What Postmark calls a bounce, and which of a recipient's events are one: the one table the bounce endpoints, the
 * statistics and the webhooks read (Postmark's clients type and compare these names and codes).
 *
 * A bounce here is a recipient's event that failed or came back: a final failure of the delivery (hard bounce, soft
 * bounce, refusal by policy; during the SMTP conversation or in a DSN after it), or mail that came back without
 * concluding anything (a DSN's delay notice, an automatic reply) or that reports the message (a spam complaint).
 * A deferral during the conversation is no bounce: the sender tries again.
 */

/**
 * Postmark's bounce types and their TypeCode, as its Bounce API's table and its clients' `BounceTypeCode` give them.
 * A `type` filter may name any of them (those we never produce select nothing). Postmark's spam complaint webhook
 * sample shows TypeCode 512, which its own table gives SpamNotification: the table wins here.
 */
export const POSTMARK_BOUNCE_TYPE_CODES = {
  HardBounce: 1,
  Transient: 2,
  Unsubscribe: 16,
  Subscribe: 32,
  AutoResponder: 64,
  AddressChange: 128,
  DnsError: 256,
  SpamNotification: 512,
  OpenRelayTest: 1024,
  Unknown: 2048,
  SoftBounce: 4096,
  VirusNotification: 8192,
  ChallengeVerification: 16384,
  BadEmailAddress: 100000,
  SpamComplaint: 100001,
  ManuallyDeactivated: 100002,
  Unconfirmed: 100003,
  Blocked: 100006,
  SMTPApiError: 100007,
  InboundError: 100008,
  DMARCPolicy: 100009,
  TemplateRenderingFailed: 100010,
} as const;

export type PostmarkBounceType = keyof typeof POSTMARK_BOUNCE_TYPE_CODES;

export const POSTMARK_BOUNCE_TYPES = Object.keys(POSTMARK_BOUNCE_TYPE_CODES) as PostmarkBounceType[];

/**
 * The kinds of bounce we record: a recipient event's type without its `Message` prefix (as the activity store's
 * `message_events.type` names it).
 */
export const BOUNCE_KINDS = [
  'HardBounced',
  'SoftBounced',
  'PolicyRejected',
  'DelayReported',
  'AutoReplied',
  'SpamComplaint',
] as const;
export type BounceKind = (typeof BOUNCE_KINDS)[number];

/** The final failures of a delivery: what a bounce rate counts (Postmark's overview `Bounced`). */
export const FAILURE_KINDS = ['HardBounced', 'SoftBounced', 'PolicyRejected'] as const satisfies readonly BounceKind[];

/** The events that are bounces. */
export type BounceEvent =
  | MessageHardBounced
  | MessageSoftBounced
  | MessagePolicyRejected
  | MessageDelayReported
  | MessageAutoReplied
  | MessageSpamComplaint;

const KIND_OF_EVENT: Record<BounceEvent['type'], BounceKind> = {
  MessageHardBounced: 'HardBounced',
  MessageSoftBounced: 'SoftBounced',
  MessagePolicyRejected: 'PolicyRejected',
  MessageDelayReported: 'DelayReported',
  MessageAutoReplied: 'AutoReplied',
  MessageSpamComplaint: 'SpamComplaint',
};

export const BOUNCE_EVENT_TYPES = Object.keys(KIND_OF_EVENT) as BounceEvent['type'][];

export function bounceKindOf(event: Pick<BounceEvent, 'type'>): BounceKind {
  return KIND_OF_EVENT[event.type];
}

export interface BounceTypeDescription {
  type: PostmarkBounceType;
  typeCode: number;
  name: string;
  description: string;
  /** Whether this kind suppresses its address (a SuppressionAdded follows its event): Postmark's Inactive. */
  suppresses: boolean;
}

const described = (
  type: PostmarkBounceType,
  name: string,
  description: string,
  suppresses = false,
): BounceTypeDescription => ({ type, typeCode: POSTMARK_BOUNCE_TYPE_CODES[type], name, description, suppresses });

/**
 * Each kind in Postmark's terms (names and descriptions are Postmark's, but for Blocked, whose meaning here is
 * narrower). A refusal by policy (5.7.x: reputation, authentication, content) is Postmark's `Blocked` ("ISP block"):
 * the receiving server refused the message, not the address, which is why it does not suppress the address.
 */
export const BOUNCE_TYPE_OF_KIND: Readonly<Record<BounceKind, BounceTypeDescription>> = {
  HardBounced: described(
    'HardBounce',
    'Hard bounce',
    'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
    true,
  ),
  SoftBounced: described(
    'SoftBounce',
    'Soft bounce',
    'Unable to temporarily deliver message (i.e. mailbox full, account disabled, exceeds quota, out of disk space).',
  ),
  PolicyRejected: described(
    'Blocked',
    'ISP block',
    'The receiving server refused the message by policy (reputation, authentication or content).',
  ),
  DelayReported: described(
    'Transient',
    'Message delayed',
    'The server could not temporarily deliver your message (ex: Message is delayed due to network troubles).',
  ),
  AutoReplied: described(
    'AutoResponder',
    'Auto responder',
    'Automatic email responder (ex: "Out of Office" or "On Vacation").',
  ),
  SpamComplaint: described(
    'SpamComplaint',
    'Spam complaint',
    'The subscriber explicitly marked this message as spam.',
    true,
  ),
};

/** The kinds a Postmark type name selects (in any case); undefined for a name Postmark does not have. */
export function kindsOfBounceType(name: string): BounceKind[] | undefined {
  const wanted = name.trim().toLowerCase();
  const type = POSTMARK_BOUNCE_TYPES.find((candidate) => candidate.toLowerCase() === wanted);
  if (!type) return undefined;
  return BOUNCE_KINDS.filter((kind) => BOUNCE_TYPE_OF_KIND[kind].type === type);
}
