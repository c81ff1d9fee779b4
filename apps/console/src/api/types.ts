/**
 * The console's HTTP contract (issue 13), as the pages read it: every answer of `/console/api/` in one file.
 * The server's shapes come from application/src/accounts/summaries.ts and the public API's activity and
 * suppression answers (apps/api/src/routes/); this file only names them for the browser, it holds no rule.
 * Times are epoch milliseconds unless a reused public answer says otherwise (its ISO strings).
 */

export type Role = 'admin' | 'developer' | 'viewer';
export const ROLES: readonly Role[] = ['admin', 'developer', 'viewer'];

export type Scope =
  | 'email:send'
  | 'email:read'
  | 'domains:read'
  | 'members:read'
  | 'webhooks:manage'
  | 'templates:read'
  | 'templates:manage';
export const SCOPES: readonly Scope[] = [
  'email:send',
  'email:read',
  'domains:read',
  'members:read',
  'webhooks:manage',
  'templates:read',
  'templates:manage',
];

export type ApiKeyMode = 'live' | 'test';

/** Every error: the catalogue's Postmark-style answer. */
export interface ErrorAnswer {
  ErrorCode: number;
  Message: string;
}

export interface Permissions {
  manageSuppressions: boolean;
  manageDomains: boolean;
  manageKeys: boolean;
  manageMembers: boolean;
  readAudit: boolean;
  issueAllScopesLiveKeys: boolean;
  manageTemplates: boolean;
  sendTestEmails: boolean;
  manageInbound: boolean;
}

export interface Me {
  email: string;
  role: Role;
  organization: { id: string; name: string };
  csrfToken: string;
  can: Permissions;
}

export interface SignInLinkAnswer {
  Message: string;
}

export interface Allowance {
  period: string;
  used: number;
  /** null: unlimited. */
  limit: number | null;
}

export interface DayCounts {
  date: string;
  sent: number;
  delivered: number;
  bounced: number;
  deferred: number;
}

export type ProblemKind = 'HardBounce' | 'SoftBounce' | 'PolicyRejected' | 'SpamComplaint' | 'DeadLetter';

export interface Problem {
  at: number;
  kind: ProblemKind;
  recipient: string;
  messageId: string;
  subject: string;
  detail: string;
}

export interface Overview {
  allowance: Allowance;
  /** 30 entries, oldest first. */
  days: DayCounts[];
  /** Newest first, at most 20. */
  problems: Problem[];
}

/** The filters of `GET /v1/messages/outbound`, spelled as its query string. */
export interface MessageFilters {
  recipient?: string;
  fromemail?: string;
  tag?: string;
  status?: string;
  subject?: string;
  fromdate?: string;
  todate?: string;
}

/** The listing statuses a status filter selects (the activity reader's LISTING_STATUSES). */
export const MESSAGE_STATUSES = [
  'Queued',
  'Sent',
  'Deferred',
  'Delivered',
  'PartiallyDelivered',
  'Bounced',
  'Rejected',
] as const;

export interface Mailbox {
  Email: string;
  Name: string;
}

export interface MessageSummary {
  MessageID: string;
  Tag: string;
  To: Mailbox[];
  Cc: Mailbox[];
  Bcc: Mailbox[];
  Recipients: string[];
  /** ISO 8601. */
  ReceivedAt: string;
  From: string;
  Subject: string;
  Attachments: string[];
  Status: string;
  TrackOpens: boolean;
  TrackLinks: string;
  Metadata: Record<string, string>;
  MessageStream: string;
  Sandboxed: boolean;
}

export interface MessageList {
  TotalCount: number;
  Messages: MessageSummary[];
}

export interface MessageEvent {
  Recipient: string;
  /** Accepted, Sent, Delivered, Transient, Bounced, Rejected, SpamComplaint, AutoResponder. */
  Type: string;
  /** ISO 8601. */
  ReceivedAt: string;
  /**
   * DeliveryMessage (the receiving server's answer), DestinationServer, Summary, BounceType, SmtpCode…; ReportID when
   * it came back after the SMTP conversation (a DSN, a spam complaint, an automatic reply); ReturnPath (the envelope
   * sender the attempt was made with) on outcomes that recorded it.
   */
  Details: Record<string, string>;
}

export interface MessageDetails extends MessageSummary {
  TextBody: string;
  HtmlBody: string;
  ReplyTo: string;
  Headers: Array<{ Name: string; Value: string }>;
  MessageEvents: MessageEvent[];
}

export interface Suppression {
  EmailAddress: string;
  /** HardBounce, SpamComplaint, ManualSuppression. */
  SuppressionReason: string;
  Origin: string;
  /** ISO 8601. */
  CreatedAt: string;
}

export interface SuppressionList {
  Suppressions: Suppression[];
}

export interface SuppressionResult {
  EmailAddress: string;
  /** Deleted, Suppressed, AlreadySuppressed, or Failed (Message says why). */
  Status: string;
  Message: string | null;
}

export interface SuppressionResults {
  Suppressions: SuppressionResult[];
}

export type DnsRecordPurpose = 'ownership' | 'mx' | 'spf' | 'dkim' | 'dmarc';

export interface DnsRecord {
  type: 'TXT' | 'MX';
  name: string;
  value: string;
  priority?: number;
  purpose: DnsRecordPurpose;
}

export interface DomainSummary {
  name: string;
  verified: boolean;
  verifiedAt: number | null;
  addedAt: number;
  dkimSelector: string;
  /** `<label>.<domain>`: where bounces come back once verified; null for a domain added before return paths. */
  returnPath: { host: string; verified: boolean; verifiedAt: number | null } | null;
  dnsRecords: DnsRecord[];
  /** Records earlier instructions asked for that should go: the MX on the domain itself. */
  dnsRecordsToRemove: DnsRecord[];
}

export interface DomainVerification {
  domain: DomainSummary;
  alreadyVerified: boolean;
  /** The TXT records found at `_sendline.<domain>`. */
  found: string[];
}

export interface ReturnPathVerification {
  domain: DomainSummary;
  alreadyVerified: boolean;
  /** What was found at the return path: MX records (`<priority> <host>`) and TXT records. */
  found: { mx: string[]; txt: string[] };
}

export interface ApiKeySummary {
  id: string;
  name: string;
  mode: ApiKeyMode;
  scopes: Scope[];
  prefix: string;
  issuedAt: number;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

export interface IssuedApiKey extends ApiKeySummary {
  token: string;
}

export interface IssueKeyRequest {
  name: string;
  mode: ApiKeyMode;
  scopes: Scope[] | ['all'];
}

export interface MemberSummary {
  email: string;
  role: Role;
  addedAt: number;
}

export interface AuditEntry {
  at: number;
  /** A member's address, 'admin command line'; null when the event names none (written before actors were kept). */
  actor: string | null;
  action: string;
  subject: string;
  eventId: string;
}

export interface AuditPage {
  TotalCount: number;
  entries: AuditEntry[];
}

/** Postmark's template types: a standard template is sent; a layout wraps templates ({{{ @content }}}). */
export type TemplateType = 'Standard' | 'Layout';

/** A template in the list: the public API's summary, with its current version and when it was made. */
export interface TemplateSummary {
  TemplateId: number;
  Name: string;
  Alias: string | null;
  Active: boolean;
  TemplateType: TemplateType;
  LayoutTemplate: string | null;
  Version: number;
  UpdatedAt: string;
}

/** A template as `GET /templates/{idOrAlias}` answers it. */
export interface Template {
  TemplateId: number;
  Name: string;
  Alias: string | null;
  Active: boolean;
  TemplateType: TemplateType;
  LayoutTemplate: string | null;
  Subject: string | null;
  HtmlBody: string | null;
  TextBody: string | null;
  Version: number;
}

export interface TemplateVersion extends Template {
  UpdatedAt: string;
}

/** What a create or an edit sends (Postmark's fields; '' clears Alias, LayoutTemplate, a body). */
export interface TemplateFields {
  Name: string;
  Alias: string;
  Subject: string;
  HtmlBody: string;
  TextBody: string;
  TemplateType: TemplateType;
  LayoutTemplate: string;
}

export interface TemplateValidationError {
  Message: string;
  Line: number;
  CharacterPosition: number;
}

export interface TemplateValidationSection {
  ContentIsValid: boolean;
  ValidationErrors: TemplateValidationError[];
  RenderedContent: string | null;
}

/** `POST /templates/validate`'s answer: each part rendered against the test model, or its errors. */
export interface TemplateValidation {
  AllContentIsValid: boolean;
  Subject: TemplateValidationSection;
  HtmlBody: TemplateValidationSection;
  TextBody: TemplateValidationSection;
  SuggestedTemplateModel: unknown;
}

/** A send's answer (Postmark's). */
export interface SendAnswer {
  To?: string;
  SubmittedAt?: string;
  MessageID?: string;
  ErrorCode: number;
  Message: string;
}

/** The Inbound page (issue 35): the organization's inbound address and hook, its inbound messages, its rules. */
export interface InboundSettings {
  InboundAddress: string;
  InboundHookUrl: string;
  RawEmailEnabled: boolean;
  /** The organization's own inbound domain ('' for none): mail to any address there is its inbound mail. */
  InboundDomain: string;
  InboundDomainVerified: boolean;
  /** What to publish for InboundDomain: an MX to the service's mail host. */
  InboundDomainDnsRecords: { Type: 'MX'; Name: string; Value: string; Priority: number }[];
  InboundSpamThreshold: number;
  /** Shown only to a role that may change the inbound settings. */
  InboundHookSigningSecret: string | null;
}

export const INBOUND_STATUSES = ['Queued', 'Processed', 'Scheduled', 'Failed', 'Blocked'] as const;

export interface InboundFilters {
  recipient?: string;
  fromemail?: string;
  subject?: string;
  mailboxhash?: string;
  tag?: string;
  status?: string;
  fromdate?: string;
  todate?: string;
}

export interface InboundAddressee {
  Email: string;
  Name: string;
  MailboxHash: string;
}

export interface InboundListedMessage {
  MessageID: string;
  From: string;
  FromName: string;
  To: string;
  Cc: string;
  OriginalRecipient: string;
  Subject: string;
  Date: string;
  MailboxHash: string;
  Tag: string;
  Status: string;
  Attachments: { Name: string; ContentType: string; ContentLength: number }[];
}

export interface InboundMessageList {
  TotalCount: number;
  InboundMessages: InboundListedMessage[];
}

/** Postmark's inbound JSON as posted, with Status, BlockedReason and ReceivedAt. */
export type InboundMessageJson = InboundListedMessage & {
  BlockedReason: string;
  ReceivedAt: string;
} & Record<string, unknown>;

export interface InboundDelivery {
  DeliveryID: string;
  Attempt: number;
  Manual: boolean;
  Status: string;
  HttpStatus: number | null;
  LatencyMs: number;
  Response: string;
  Error: string | null;
  AttemptedAt: string;
  NextAttemptAt: string | null;
}

export interface InboundMessageDetails {
  message: InboundMessageJson;
  deliveries: InboundDelivery[];
}

export interface InboundRule {
  ID: number;
  Rule: string;
}
