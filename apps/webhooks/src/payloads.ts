import { createHash } from 'node:crypto';
import type {
  MessageAccepted,
  MessageDelivered,
  MessageHardBounced,
  MessagePolicyRejected,
  MessageSoftBounced,
  SuppressionAdded,
  SuppressionDeleted,
} from '@sendline/domain';

/**
 * Postmark's webhook bodies, field for field (docs/webhooks.md has the table: each field and where it comes from).
 * Pure: an event and the summary of its message in, the JSON object out.
 */

/** What a message's later events need of its MessageAccepted (kept by the dispatcher, summaries.ts). */
export interface MessageSummary {
  from: string;
  subject: string;
  tag: string;
  metadata: Record<string, string>;
  messageStream: string;
}

export function summaryOf(event: MessageAccepted): MessageSummary {
  return {
    from: event.data.from.email,
    subject: event.data.subject,
    tag: event.data.tag ?? '',
    metadata: event.data.metadata,
    messageStream: event.data.messageStream,
  };
}

/** A message whose MessageAccepted was not seen (accepted before the organization had a webhook): fields left empty. */
export const UNKNOWN_SUMMARY: MessageSummary = {
  from: '',
  subject: '',
  tag: '',
  metadata: {},
  messageStream: 'outbound',
};

/**
 * Postmark numbers its servers and bounces; clients type ServerID and a bounce's ID as integers. Ours are UUIDs, so
 * each gets a stable positive integer below 2^48 (the first six bytes of its SHA-256, plus one): the same organization or event
 * always gives the same number.
 */
export function numericId(id: string): number {
  const hash = createHash('sha256').update(id).digest();
  return hash.readUIntBE(0, 6) + 1;
}

const iso = (ms: number) => new Date(ms).toISOString();

export type WebhookRecordType = 'Delivery' | 'Bounce' | 'SubscriptionChange';

export interface DeliveryPayload {
  RecordType: 'Delivery';
  ServerID: number;
  MessageStream: string;
  MessageID: string;
  Recipient: string;
  Tag: string;
  DeliveredAt: string;
  Details: string;
  Metadata: Record<string, string>;
}

export function deliveryPayload(event: MessageDelivered, summary: MessageSummary): DeliveryPayload {
  return {
    RecordType: 'Delivery',
    ServerID: numericId(event.metadata.organizationId),
    MessageStream: summary.messageStream,
    MessageID: event.data.messageId,
    Recipient: event.data.recipient,
    Tag: summary.tag,
    DeliveredAt: iso(event.metadata.occurredAt),
    Details: event.data.smtpResponse,
    Metadata: summary.metadata,
  };
}

/** Postmark's bounce types we produce, with their TypeCode, Name and Description. */
export const BOUNCE_TYPES = {
  HardBounce: {
    typeCode: 1,
    name: 'Hard bounce',
    description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
  },
  SoftBounce: {
    typeCode: 4096,
    name: 'Soft bounce',
    description: 'Unable to temporarily deliver this message; retries ran out, the address stays active.',
  },
  Blocked: {
    typeCode: 100006,
    name: 'ISP block',
    description: 'The receiving server refused the message for its own policy (reputation, content, authentication).',
  },
} as const;
export type BounceType = keyof typeof BOUNCE_TYPES;

export interface BouncePayload {
  RecordType: 'Bounce';
  ID: number;
  Type: BounceType;
  TypeCode: number;
  Name: string;
  Tag: string;
  MessageID: string;
  Metadata: Record<string, string>;
  ServerID: number;
  MessageStream: string;
  Description: string;
  Details: string;
  Email: string;
  From: string;
  BouncedAt: string;
  DumpAvailable: boolean;
  Inactive: boolean;
  CanActivate: boolean;
  Subject: string;
}

export type BounceEvent = MessageHardBounced | MessageSoftBounced | MessagePolicyRejected;

export function bounceTypeOf(event: BounceEvent): BounceType {
  switch (event.type) {
    case 'MessageHardBounced':
      return 'HardBounce';
    case 'MessageSoftBounced':
      return 'SoftBounce';
    case 'MessagePolicyRejected':
      return 'Blocked';
  }
}

export function bouncePayload(event: BounceEvent, summary: MessageSummary): BouncePayload {
  const type = bounceTypeOf(event);
  const known = BOUNCE_TYPES[type];
  return {
    RecordType: 'Bounce',
    ID: numericId(event.metadata.eventId),
    Type: type,
    TypeCode: known.typeCode,
    Name: known.name,
    Tag: summary.tag,
    MessageID: event.data.messageId,
    Metadata: summary.metadata,
    ServerID: numericId(event.metadata.organizationId),
    MessageStream: summary.messageStream,
    Description: known.description,
    Details: event.data.smtpResponse ?? event.data.summary,
    Email: event.data.recipient,
    From: summary.from,
    BouncedAt: iso(event.metadata.occurredAt),
    // No raw bounce message is kept (the SMTP answer is in Details).
    DumpAvailable: false,
    // A hard bounce suppresses the address (SuppressionAdded, reason HardBounce); removing the suppression reactivates it.
    Inactive: type === 'HardBounce',
    CanActivate: true,
    Subject: summary.subject,
  };
}

export interface SubscriptionChangePayload {
  RecordType: 'SubscriptionChange';
  MessageID: string | null;
  ServerID: number;
  MessageStream: string;
  ChangedAt: string;
  Recipient: string;
  Origin: string;
  SuppressSending: boolean;
  SuppressionReason: string | null;
  Tag: string;
  Metadata: Record<string, string>;
}

/**
 * A suppression added (hard bounce, manual) or deleted. A suppression is not tied to a message in our events, so
 * MessageID is null, Tag empty and Metadata empty (Postmark fills them only when the change came from a message).
 * A deletion's Origin is 'Customer' (deletions come through the API's suppressions delete or the console).
 */
export function subscriptionChangePayload(
  event: SuppressionAdded | SuppressionDeleted,
  messageStream = 'outbound',
): SubscriptionChangePayload {
  const added = event.type === 'SuppressionAdded' ? event.data : undefined;
  return {
    RecordType: 'SubscriptionChange',
    MessageID: null,
    ServerID: numericId(event.metadata.organizationId),
    MessageStream: messageStream,
    ChangedAt: iso(event.metadata.occurredAt),
    Recipient: event.data.emailAddress,
    Origin: added?.origin ?? 'Customer',
    SuppressSending: added !== undefined,
    SuppressionReason: added?.reason ?? null,
    Tag: '',
    Metadata: {},
  };
}
