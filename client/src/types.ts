/**
 * Public types of the client: what you pass in (camelCase) and what you get back.
 * The wire format (PascalCase, Postmark's) stays inside the client.
 */

/** Any JSON value, as found in free-form parts of an answer (event details). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

// ---------------------------------------------------------------------------
// Client construction and transport

/** The subset of a fetch Response the client reads. The global `Response` satisfies it. */
export interface FetchResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** The request the client hands to `fetch`. */
export interface FetchRequestInit {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** A fetch-compatible function; the global `fetch` satisfies it. */
export type FetchFunction = (url: string, init: FetchRequestInit) => Promise<FetchResponse>;

export interface ClientOptions {
  /** Base address including the `/v1` prefix. Default: the production base address `https://api.sendline.dev/v1`. */
  baseUrl?: string;
  /** Abort a request (including reading its answer) after this many milliseconds. Default 30000; 0 disables. */
  timeoutMs?: number;
  /** A fetch-compatible function. Default: the global `fetch`. */
  fetch?: FetchFunction;
}

// ---------------------------------------------------------------------------
// Sending

/** One address or several; several are joined with ", " on the wire. */
export type Recipients = string | readonly string[];

export type TrackLinks = 'None' | 'HtmlAndText' | 'HtmlOnly' | 'TextOnly';

export interface MessageHeader {
  name: string;
  value: string;
}

/** Base64 text, or raw bytes that the client encodes. */
export type AttachmentContent = string | Uint8Array | ArrayBuffer;

export interface Attachment {
  filename: string;
  content: AttachmentContent;
  /** MIME type, e.g. `application/pdf`. */
  contentType: string;
  /** For inline images referenced as `cid:<contentId>` from the HTML body. */
  contentId?: string;
}

export interface EmailMessage {
  /** Sender; its domain must be verified on your organization. */
  from: string;
  to: Recipients;
  cc?: Recipients;
  bcc?: Recipients;
  subject?: string;
  /** At least one of textBody / htmlBody. */
  textBody?: string;
  htmlBody?: string;
  replyTo?: Recipients;
  tag?: string;
  /** Custom headers, as a map or as a list (a list allows repeating a name). */
  headers?: Readonly<Record<string, string>> | readonly MessageHeader[];
  metadata?: Readonly<Record<string, string>>;
  attachments?: readonly Attachment[];
  /** Accepted for compatibility; the server ignores it. */
  trackOpens?: boolean;
  trackLinks?: TrackLinks;
  messageStream?: string;
}

export interface SendOptions {
  /**
   * Sent as the `Idempotency-Key` header. Reuse the same key when retrying the
   * same send (after a timeout, a network error, a 429 or a 5xx) so it is not
   * delivered twice.
   */
  idempotencyKey?: string;
}

export interface SendResult {
  /** Recipient address(es) as accepted. */
  to: string;
  cc?: string;
  bcc?: string;
  /** ISO 8601 timestamp (UTC). */
  submittedAt: string;
  /** Use it with `emails.get`. With a test key it is returned, but nothing is stored. */
  messageId: string;
  /** 0 means accepted (not delivered). */
  errorCode: number;
  /** `OK`, `Test job accepted`, or `OK. Not sent to suppressed recipients: …`. */
  message: string;
}

/** A batch entry the API accepted. */
export interface BatchAccepted {
  ok: true;
  messageId: string;
  submittedAt: string;
  to: string;
  cc?: string;
  bcc?: string;
  message: string;
}

/** A batch entry the API refused; the other entries are unaffected. */
export interface BatchRefused {
  ok: false;
  /** The API's non-zero ErrorCode for this entry (e.g. 406 inactive recipients). */
  errorCode: number;
  message: string;
}

export type BatchResult = BatchAccepted | BatchRefused;

// ---------------------------------------------------------------------------
// Activity

export interface ListEmailsFilters {
  /** Page size. Default 100. */
  count?: number;
  /** Number of messages to skip. Default 0. */
  offset?: number;
  recipient?: string;
  fromEmail?: string;
  tag?: string;
  status?: string;
  subject?: string;
  messageStream?: string;
}

export interface Mailbox {
  email: string;
  /** Display name; null when there is none. */
  name: string | null;
}

/** A message as listed by `emails.list`. Fields the API leaves out take the defaults noted. */
export interface OutboundMessage {
  messageId: string;
  /** null when untagged. */
  tag: string | null;
  to: Mailbox[];
  /** [] when absent. */
  cc: Mailbox[];
  /** [] when absent. */
  bcc: Mailbox[];
  recipients: string[];
  /** ISO 8601 timestamp. */
  receivedAt: string;
  from: string;
  /** '' when absent. */
  subject: string;
  /** Attachment file names; [] when absent. */
  attachments: string[];
  status: string;
  /** false when absent. */
  trackOpens: boolean;
  /** 'None' when absent. */
  trackLinks: TrackLinks;
  /** {} when absent. Keys are yours and are returned unchanged. */
  metadata: Record<string, string>;
  /** 'outbound' when absent. */
  messageStream: string;
  /** false when absent. */
  sandboxed: boolean;
}

export interface ListEmailsResult {
  totalCount: number;
  messages: OutboundMessage[];
}

export type MessageEventType =
  | 'Accepted'
  | 'Sent'
  | 'Processed'
  | 'Delivered'
  | 'Transient'
  | 'Bounced'
  | 'Rejected'
  | 'SpamComplaint'
  | 'AutoResponder'
  // Other event types are passed through as they come.
  | (string & {});

export interface MessageEvent {
  recipient: string;
  type: MessageEventType;
  /** ISO 8601 timestamp. */
  receivedAt: string;
  /**
   * Free-form details with camelCased keys, e.g. `deliveryMessage`,
   * `destinationServer`, `destinationIp` (Delivered, Transient) or `summary`,
   * `bounceId` (Bounced). {} when absent.
   */
  details: Record<string, JsonValue>;
}

/** A message with its bodies and events, as returned by `emails.get`. */
export interface OutboundMessageDetails extends OutboundMessage {
  /** null when absent. */
  textBody: string | null;
  /** null when absent. */
  htmlBody: string | null;
  /** The raw message as sent; null when absent. */
  body: string | null;
  /** Oldest first, as the API returns them; [] when absent. */
  messageEvents: MessageEvent[];
}

// ---------------------------------------------------------------------------
// Suppressions

export type SuppressionReason = 'HardBounce' | 'SpamComplaint' | 'ManualSuppression' | (string & {});
export type SuppressionOrigin = 'Recipient' | 'Customer' | 'Admin' | (string & {});

export interface Suppression {
  /** Stored lowercase. */
  emailAddress: string;
  suppressionReason: SuppressionReason;
  origin: SuppressionOrigin;
  /** Timestamp of the suppression. */
  createdAt: string;
}

export interface SuppressionDeleteResult {
  /** The address as you supplied it. */
  emailAddress: string;
  status: 'Deleted' | 'Failed';
  /** null when Deleted; the reason when Failed. */
  message: string | null;
}

// ---------------------------------------------------------------------------
// Account (the service's own camelCase format)

export type Scope = 'email:send' | 'email:read' | 'domains:read' | 'members:read' | (string & {});

export interface Me {
  organization: { id: string; name: string };
  key: {
    id: string;
    name: string;
    /** A test key checks sends but delivers nothing. */
    mode: 'test' | 'live';
    scopes: Scope[];
    /** The visible start of the key. */
    prefix: string;
  };
}

export interface DnsRecord {
  type: 'TXT' | 'MX' | 'CNAME' | (string & {});
  name: string;
  value: string;
  /** What the record is for, e.g. ownership, mx, spf, dkim, dmarc. */
  purpose: string;
  /** Whether the record was found as expected. */
  state: string;
}

export interface Domain {
  name: string;
  verified: boolean;
  /** null while not verified. */
  verifiedAt: string | null;
  dnsRecords: DnsRecord[];
}

export interface Member {
  email: string;
  role: 'admin' | 'member' | (string & {});
  /** ISO 8601 timestamp. */
  addedAt: string;
}
