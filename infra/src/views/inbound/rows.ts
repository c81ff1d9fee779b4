import type { InboundMessageBypassed, InboundMessageReceived } from '@sendline/domain';
import { utcDay } from '../activity/rows';

/** A row of `inbound_messages` (migration 0010). */
export interface InboundRow {
  organization_id: string;
  day: string;
  received_at_ms: number;
  message_id: string;
  received_id: string;
  status: string;
  blocked_reason: string;
  from_address: string;
  from_name: string;
  to_addresses: string;
  cc_addresses: string;
  subject: string;
  mailbox_hash: string;
  tag: string;
  original_recipient: string;
  size_bytes: number;
  payload: string;
}

export const INBOUND_COLUMNS = [
  ['organization_id', 'string'],
  ['day', 'string'],
  ['received_at_ms', 'number'],
  ['message_id', 'string'],
  ['received_id', 'string'],
  ['status', 'string'],
  ['blocked_reason', 'string'],
  ['from_address', 'string'],
  ['from_name', 'string'],
  ['to_addresses', 'string'],
  ['cc_addresses', 'string'],
  ['subject', 'string'],
  ['mailbox_hash', 'string'],
  ['tag', 'string'],
  ['original_recipient', 'string'],
  ['size_bytes', 'number'],
  ['payload', 'string'],
] as const satisfies readonly (readonly [keyof InboundRow, 'string' | 'number'])[];

/** A row of `inbound_bypasses`. */
export interface BypassRow {
  organization_id: string;
  day: string;
  bypassed_at_ms: number;
  message_id: string;
}

export const BYPASS_COLUMNS = [
  ['organization_id', 'string'],
  ['day', 'string'],
  ['bypassed_at_ms', 'number'],
  ['message_id', 'string'],
] as const satisfies readonly (readonly [keyof BypassRow, 'string' | 'number'])[];

export function inboundRow(event: InboundMessageReceived): InboundRow {
  const d = event.data;
  return {
    organization_id: event.metadata.organizationId,
    day: utcDay(d.receivedAt),
    received_at_ms: d.receivedAt,
    message_id: d.messageId,
    received_id: d.receivedId,
    status: d.status,
    blocked_reason: d.blockedReason,
    from_address: d.from,
    from_name: d.fromName,
    to_addresses: d.to,
    cc_addresses: d.cc,
    subject: d.subject,
    mailbox_hash: d.mailboxHash,
    tag: d.tag,
    original_recipient: d.originalRecipient,
    size_bytes: d.sizeBytes,
    payload: d.payload,
  };
}

export function bypassRow(event: InboundMessageBypassed): BypassRow {
  return {
    organization_id: event.metadata.organizationId,
    day: utcDay(event.metadata.occurredAt),
    bypassed_at_ms: event.metadata.occurredAt,
    message_id: event.data.messageId,
  };
}
