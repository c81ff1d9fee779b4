import type { BounceKind } from '@sendline/infra';

/**
 * Postmark's bounce types (its Bounce API's table: Type, TypeCode, Name, Description) and which of them our
 * outcomes are. A `type` filter may name any of them (the ones we never produce select nothing); a name that is
 * not in the table is refused.
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

export interface BounceTypeDescription {
  type: PostmarkBounceType;
  typeCode: number;
  name: string;
  description: string;
}

/**
 * Our three final failures in Postmark's terms. A refusal by policy (5.7.x: reputation, authentication, content)
 * is Postmark's `Blocked` ("ISP block"): the receiving server refused the message, not the address, which is
 * why it does not suppress the address (a hard bounce does).
 */
export const BOUNCE_TYPE_OF_KIND: Record<BounceKind, BounceTypeDescription> = {
  HardBounced: {
    type: 'HardBounce',
    typeCode: POSTMARK_BOUNCE_TYPE_CODES.HardBounce,
    name: 'Hard bounce',
    description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
  },
  SoftBounced: {
    type: 'SoftBounce',
    typeCode: POSTMARK_BOUNCE_TYPE_CODES.SoftBounce,
    name: 'Soft bounce',
    description:
      'Unable to temporarily deliver message (i.e. mailbox full, account disabled, exceeds quota, out of disk space).',
  },
  PolicyRejected: {
    type: 'Blocked',
    typeCode: POSTMARK_BOUNCE_TYPE_CODES.Blocked,
    name: 'ISP block',
    description: 'The receiving server refused the message by policy (reputation, authentication or content).',
  },
};

/** The kinds a Postmark type name selects (in any case); undefined for a name Postmark does not have. */
export function kindsOfBounceType(name: string): BounceKind[] | undefined {
  const type = POSTMARK_BOUNCE_TYPES.find((candidate) => candidate.toLowerCase() === name.trim().toLowerCase());
  if (!type) return undefined;
  return (Object.keys(BOUNCE_TYPE_OF_KIND) as BounceKind[]).filter((kind) => BOUNCE_TYPE_OF_KIND[kind].type === type);
}
