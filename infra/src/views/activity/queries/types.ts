import type { MessageListingStatus } from '@sendline/domain';

/** Filters of the message list (GET /v1/messages/outbound). Times are epoch milliseconds. */
export interface ActivityFilters {
  count: number;
  offset: number;
  recipient?: string;
  fromEmail?: string;
  tag?: string;
  status?: string;
  subject?: string;
  fromDate?: number;
  toDate?: number;
  messageStream?: string;
}

export interface AddressEntry {
  email: string;
  name: string;
}

export interface MessageSummary {
  messageId: string;
  receivedAt: number;
  fromEmail: string;
  fromName: string;
  subject: string;
  tag: string;
  messageStream: string;
  to: AddressEntry[];
  cc: AddressEntry[];
  bcc: AddressEntry[];
  /** Every recipient the message was queued for (lowercased). */
  recipients: string[];
  attachmentNames: string[];
  status: MessageListingStatus;
  trackOpens: boolean;
  trackLinks: string;
  metadata: Record<string, string>;
}

export interface ActivityEvent {
  /**
   * Accepted, Sent, Delivered, Transient (deferred, or a DSN's delay notice), Bounced (hard or soft), Rejected
   * (policy), SpamComplaint, AutoResponder (an automatic reply).
   */
  type: string;
  recipient: string;
  occurredAt: number;
  details: Record<string, string>;
}

export interface MessageDetails extends MessageSummary {
  textBody: string;
  htmlBody: string;
  /** The template the message was rendered from and its version (a send with a template); null for a plain send. */
  template: { templateId: number; version: number } | null;
  replyTo: string;
  headers: { name: string; value: string }[];
  events: ActivityEvent[];
}

/** What the API reads from the activity store. Every query is scoped to one organization. */
export interface ActivityReader {
  list(organizationId: string, filters: ActivityFilters): Promise<{ total: number; messages: MessageSummary[] }>;
  details(organizationId: string, messageId: string): Promise<MessageDetails | null>;
  /** Resolves when the store answers; rejects when it cannot be reached (or `signal` fires first). */
  ping(signal?: AbortSignal): Promise<void>;
}
