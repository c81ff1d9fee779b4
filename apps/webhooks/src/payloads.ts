import { createHash } from 'node:crypto';
import {
  BOUNCE_TYPE_OF_KIND,
  bounceKindOf,
  type BounceEvent,
  type MessageAccepted,
  type MessageDelivered,
  type MessageSpamComplaint,
  type PostmarkBounceType,
  type SuppressionAdded,
  type SuppressionDeleted,
} from '@sendline/domain';
import { bounceIdOf } from '@sendline/infra';

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
 * Postmark numbers its servers; clients type ServerID as an integer. Ours are UUIDs, so each gets a stable positive
 * integer below 2^48 (the first six bytes of its SHA-256, plus one): the same organization always gives the same
 * number. (A bounce's ID is the one the bounce endpoints give it: `bounceIdOf` its event id.)
 */
export function numericId(id: string): number {
  const hash = createHash('sha256').update(id).digest();
  return hash.readUIntBE(0, 6) + 1;
}

const iso = (ms: number) => new Date(ms).toISOString();

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

interface BounceFields {
  ID: number;
  Type: PostmarkBounceType;
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

/** Every bounce but a spam complaint (Postmark's Bounce webhook). */
export interface BouncePayload extends BounceFields {
  RecordType: 'Bounce';
}

/** A spam complaint (Postmark's SpamComplaint webhook: the Bounce's fields, its own RecordType and trigger). */
export interface SpamComplaintPayload extends BounceFields {
  RecordType: 'SpamComplaint';
}

/** The bounces the Bounce webhook tells: every bounce kind but the spam complaint, which has a webhook of its own. */
export type BounceWebhookEvent = Exclude<BounceEvent, MessageSpamComplaint>;

/**
 * A bounce's fields, as the bounce endpoints give them (the domain's one table of Postmark's types, the same ID):
 * a client told of a bounce can read it (GET /bounces/{ID}) and reactivate its address (PUT …/activate).
 */
function bounceFields(event: BounceEvent, summary: MessageSummary): BounceFields {
  const known = BOUNCE_TYPE_OF_KIND[bounceKindOf(event)];
  const smtpResponse = 'smtpResponse' in event.data ? event.data.smtpResponse : undefined;
  return {
    ID: bounceIdOf(event.metadata.eventId),
    Type: known.type,
    TypeCode: known.typeCode,
    Name: known.name,
    Tag: summary.tag,
    MessageID: event.data.messageId,
    Metadata: summary.metadata,
    ServerID: numericId(event.metadata.organizationId),
    MessageStream: summary.messageStream,
    Description: known.description,
    // The receiving server's answer, in the conversation or in a DSN (its Diagnostic-Code); else what was reported.
    Details: smtpResponse || event.data.summary,
    Email: event.data.recipient,
    From: summary.from,
    BouncedAt: iso(event.metadata.occurredAt),
    // No raw bounce message is kept (the SMTP answer, or the report's diagnostic, is in Details).
    DumpAvailable: false,
    // A hard bounce and a spam complaint suppress the address (their SuppressionAdded follows); removing the
    // suppression reactivates it.
    Inactive: known.suppresses,
    CanActivate: known.suppresses,
    Subject: summary.subject,
  };
}

export function bouncePayload(event: BounceWebhookEvent, summary: MessageSummary): BouncePayload {
  return { RecordType: 'Bounce', ...bounceFields(event, summary) };
}

export function spamComplaintPayload(event: MessageSpamComplaint, summary: MessageSummary): SpamComplaintPayload {
  return { RecordType: 'SpamComplaint', ...bounceFields(event, summary) };
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
