import {
  isConcluded,
  messageListingStatus,
  RECIPIENT_TRANSITIONS,
  type Mailbox,
  type MessageAccepted,
  type MessageEvent,
  type MessageState,
  type RecipientStatus,
} from '@sendline/domain';

/**
 * Rows of the activity store (infra/clickhouse/migrations/0001_activity.sql, 0005_return_path.sql) and how
 * message events become them. The message row's state (phase, recipients' statuses,
 * listing status) is the domain's: the writer folds events with `evolveMessage` and
 * lists the message under `messageListingStatus` (deriveMessageStatus).
 */

const DAY_MS = 24 * 60 * 60 * 1000;

/** A row of `messages`, as inserted (JSONEachRow) and as read back. */
export interface MessageRow {
  organization_id: string;
  message_id: string;
  day: string;
  received_at: number;
  received_at_ms: number;
  status: string;
  phase: string;
  recipients: string[];
  recipient_statuses: string[];
  suppressed_recipients: string[];
  from_email: string;
  from_name: string;
  subject: string;
  tag: string;
  message_stream: string;
  to_json: string;
  cc_json: string;
  bcc_json: string;
  reply_to: string;
  metadata_json: string;
  metadata_keys: string[];
  metadata_values: string[];
  headers_json: string;
  attachment_names: string[];
  text_body: string;
  html_body: string;
  /** The template the message was rendered from, and its version; 0 for a plain send. */
  template_id: number;
  template_version: number;
  track_opens: number;
  track_links: string;
  size_bytes: number;
  sent_at_ms: number;
  completed_at_ms: number;
  updated_at_ms: number;
  version: number;
}

/** A row of `message_events`. */
export interface MessageEventRow {
  organization_id: string;
  message_id: string;
  day: string;
  event_id: string;
  /**
   * Accepted, Sent, Delivered, Deferred, HardBounced, SoftBounced, PolicyRejected, and what came back after the
   * SMTP conversation: SpamComplaint, AutoReplied, DelayReported (a refusal in a DSN is HardBounced etc.).
   */
  type: string;
  recipient: string;
  occurred_at: number;
  occurred_at_ms: number;
  message_received_at_ms: number;
  tag: string;
  smtp_code: number;
  enhanced_status: string;
  smtp_response: string;
  destination_server: string;
  summary: string;
  reason: string;
  attempt: number;
  next_attempt_at_ms: number;
  /** The received mail that reported it (a DSN, an ARF report, an automatic reply); '' for an SMTP answer. */
  report_id: string;
  /** A spam complaint's reporting software (the ARF report's User-Agent); '' otherwise. */
  user_agent: string;
  kafka_partition: number;
  kafka_offset: number;
  /** The envelope sender an outcome's attempt was made with (its Return-Path); '' when not recorded. */
  return_path: string;
}

/** The UTC day of an epoch-milliseconds time, `YYYY-MM-DD`: the partition of the day. */
export function utcDay(ms: number): string {
  return new Date(Math.floor(ms / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
}

function formatMailbox(mailbox: Mailbox): string {
  return mailbox.name ? `"${mailbox.name.replace(/"/g, '\\"')}" <${mailbox.email}>` : mailbox.email;
}

const addressesJson = (list: Mailbox[]) =>
  JSON.stringify(list.map((mailbox) => ({ email: mailbox.email, name: mailbox.name ?? '' })));

/**
 * Rank of a recipient status in its lifecycle: the longest way to it from Queued in the domain's
 * RECIPIENT_TRANSITIONS (Queued 0, Deferred 1, Delivered 2, HardBounced / SoftBounced / PolicyRejected 3, since a
 * DSN may refuse after a delivery). Every move but Deferred → Deferred raises it.
 */
const STATUS_RANK: ReadonlyMap<string, number> = (() => {
  const rank = new Map<RecipientStatus, number>([['Queued', 0]]);
  // Longest paths in a graph without cycles (self-loops aside): relax every edge once per status.
  for (let round = 0; round < Object.keys(RECIPIENT_TRANSITIONS).length; round++) {
    for (const [from, targets] of Object.entries(RECIPIENT_TRANSITIONS) as [RecipientStatus, RecipientStatus[]][]) {
      const at = rank.get(from);
      if (at === undefined) continue;
      for (const to of targets) if (to !== from && (rank.get(to) ?? -1) < at + 1) rank.set(to, at + 1);
    }
  }
  return rank;
})();

function statusRank(status: string): number {
  return STATUS_RANK.get(status) ?? 0;
}

/**
 * The row's version: how far the message has come (phase, and each recipient's rank).
 * Every visible change of state raises it (a recipient only moves forward, Deferred →
 * Deferred changes nothing shown), so the most advanced row wins in ReplacingMergeTree,
 * and two writers that saw the same events write the same row under the same version.
 */
export function progressOf(phase: string, statuses: readonly string[]): number {
  return 1 + (phase === 'Sent' ? 1 : 0) + statuses.reduce((sum, status) => sum + statusRank(status), 0);
}

/** The message row that a MessageAccepted starts. */
export function acceptedRow(event: MessageAccepted, state: MessageState): MessageRow {
  const data = event.data;
  const receivedAt = data.submittedAt || event.metadata.occurredAt;
  const statuses = data.activeRecipients.map(() => 'Queued');
  const metadata = Object.entries(data.metadata ?? {});
  return {
    organization_id: event.metadata.organizationId,
    message_id: data.messageId,
    day: utcDay(receivedAt),
    received_at: Math.floor(receivedAt / 1000),
    received_at_ms: receivedAt,
    status: messageListingStatus(state) ?? 'Queued',
    phase: 'Accepted',
    recipients: [...data.activeRecipients],
    recipient_statuses: statuses,
    suppressed_recipients: [...data.suppressedRecipients],
    from_email: data.from.email,
    from_name: data.from.name ?? '',
    subject: data.subject,
    tag: data.tag ?? '',
    message_stream: data.messageStream,
    to_json: addressesJson(data.to),
    cc_json: addressesJson(data.cc),
    bcc_json: addressesJson(data.bcc),
    reply_to: data.replyTo.map(formatMailbox).join(', '),
    metadata_json: JSON.stringify(data.metadata ?? {}),
    metadata_keys: metadata.map(([key]) => key),
    metadata_values: metadata.map(([, value]) => value),
    headers_json: JSON.stringify(data.headers.map((header) => ({ name: header.name, value: header.value }))),
    attachment_names: data.attachments.map((attachment) => attachment.name),
    text_body: data.textBody ?? '',
    html_body: data.htmlBody ?? '',
    template_id: data.template?.templateId ?? 0,
    template_version: data.template?.version ?? 0,
    track_opens: data.trackOpens ? 1 : 0,
    track_links: data.trackLinks,
    size_bytes: data.sizeBytes,
    sent_at_ms: 0,
    completed_at_ms: 0,
    updated_at_ms: event.metadata.occurredAt,
    version: progressOf('Accepted', statuses),
  };
}

/** The aggregate's state as a message row records it (what `evolveMessage` continues from). */
export function stateOfRow(row: MessageRow): MessageState {
  const recipients = new Map<string, { status: RecipientStatus; failedAttempts: number }>();
  row.recipients.forEach((address, i) =>
    recipients.set(address, { status: (row.recipient_statuses[i] ?? 'Queued') as RecipientStatus, failedAttempts: 0 }),
  );
  return {
    phase: row.phase === 'Sent' ? 'Sent' : 'Accepted',
    messageId: row.message_id,
    organizationId: row.organization_id,
    recipients,
    suppressedRecipients: row.suppressed_recipients,
  };
}

/**
 * Moves `row` (a copy the caller owns) to the state `after` that `event` led to;
 * false, and the row unchanged, when nothing shown changed (a duplicate, an outcome
 * that does not fit, Deferred again).
 */
export function advanceRow(row: MessageRow, after: MessageState, event: MessageEvent): boolean {
  if (after.phase === 'Initial') return false;
  const statuses = row.recipients.map((address) => after.recipients.get(address)?.status ?? 'Queued');
  const changed = after.phase !== row.phase || statuses.some((status, i) => status !== row.recipient_statuses[i]);
  if (!changed) return false;
  const at = event.metadata.occurredAt;
  const complete = statuses.length > 0 && statuses.every(isConcluded);
  row.phase = after.phase;
  row.recipient_statuses = statuses;
  row.status = messageListingStatus(after) ?? row.status;
  if (event.type === 'MessageSent' && !row.sent_at_ms) row.sent_at_ms = at;
  if (complete && !row.completed_at_ms) row.completed_at_ms = at;
  row.updated_at_ms = at;
  row.version = progressOf(after.phase, statuses);
  return true;
}

/** The basic code of an SMTP reply, also as a DSN's Diagnostic-Code gives it (`smtp; 550 5.1.1 …`). */
function smtpCodeOf(response: string | undefined): number {
  const match = /^\s*(?:smtp;\s*)?([2-5]\d\d)\b/i.exec(response ?? '');
  return match ? Number(match[1]) : 0;
}

function enhancedOf(response: string | undefined): string {
  const match = /\b([245]\.\d{1,3}\.\d{1,3})\b/.exec(response ?? '');
  return match?.[1] ?? '';
}

/** The short name an event has in `message_events.type`. */
export const EVENT_ROW_TYPES = {
  MessageAccepted: 'Accepted',
  MessageSent: 'Sent',
  MessageDelivered: 'Delivered',
  MessageDeferred: 'Deferred',
  MessageHardBounced: 'HardBounced',
  MessageSoftBounced: 'SoftBounced',
  MessagePolicyRejected: 'PolicyRejected',
  MessageSpamComplaint: 'SpamComplaint',
  MessageAutoReplied: 'AutoReplied',
  MessageDelayReported: 'DelayReported',
} as const satisfies Record<MessageEvent['type'], string>;

/** Where an event was read from (kept for tracing; not part of what a replay compares). */
export interface SourcePosition {
  partition: number;
  offset: string | number;
}

/** The `message_events` row of an event of the message `message`. */
export function eventRow(event: MessageEvent, message: MessageRow, position?: SourcePosition): MessageEventRow {
  const at = event.metadata.occurredAt;
  let recipient = '';
  let smtpResponse = '';
  let smtpCode = 0;
  let enhanced = '';
  let destination = '';
  let summary = '';
  let reason = '';
  let attempt = 0;
  let nextAttemptAt = 0;
  let reportId = '';
  let userAgent = '';
  const returnPath = 'returnPath' in event.data ? (event.data.returnPath ?? '') : '';
  switch (event.type) {
    case 'MessageAccepted':
    case 'MessageSent':
      break;
    case 'MessageDelivered':
      recipient = event.data.recipient;
      smtpResponse = event.data.smtpResponse;
      destination = event.data.destinationServer;
      break;
    case 'MessageHardBounced':
    case 'MessagePolicyRejected':
      recipient = event.data.recipient;
      smtpResponse = event.data.smtpResponse;
      smtpCode = event.data.statusCode;
      enhanced = event.data.enhancedStatus ?? '';
      summary = event.data.summary;
      reportId = event.data.reportId ?? '';
      break;
    case 'MessageDeferred':
      recipient = event.data.recipient;
      smtpResponse = event.data.smtpResponse ?? '';
      summary = event.data.summary;
      reason = event.data.reason;
      attempt = event.data.attempt;
      nextAttemptAt = event.data.nextAttemptAt;
      break;
    case 'MessageSoftBounced':
      recipient = event.data.recipient;
      smtpResponse = event.data.smtpResponse ?? '';
      summary = event.data.summary;
      reason = event.data.reason;
      attempt = event.data.attempts;
      reportId = event.data.reportId ?? '';
      break;
    case 'MessageSpamComplaint':
      recipient = event.data.recipient;
      summary = event.data.summary;
      reason = event.data.feedbackType;
      userAgent = event.data.userAgent ?? '';
      reportId = event.data.reportId;
      break;
    case 'MessageAutoReplied':
    case 'MessageDelayReported':
      recipient = event.data.recipient;
      smtpResponse = event.data.smtpResponse ?? '';
      enhanced = event.data.enhancedStatus ?? '';
      summary = event.data.summary;
      reportId = event.data.reportId;
      break;
    default: {
      const _exhaustive: never = event;
    }
  }
  return {
    organization_id: event.metadata.organizationId,
    message_id: message.message_id,
    day: message.day,
    event_id: event.metadata.eventId,
    type: EVENT_ROW_TYPES[event.type],
    recipient,
    occurred_at: Math.floor(at / 1000),
    occurred_at_ms: at,
    message_received_at_ms: message.received_at_ms,
    tag: message.tag,
    smtp_code: smtpCode || smtpCodeOf(smtpResponse),
    enhanced_status: enhanced || enhancedOf(smtpResponse),
    smtp_response: smtpResponse,
    destination_server: destination,
    summary,
    reason,
    attempt,
    next_attempt_at_ms: nextAttemptAt,
    report_id: reportId,
    user_agent: userAgent,
    kafka_partition: position?.partition ?? 0,
    kafka_offset: position ? Number(position.offset) : 0,
    return_path: returnPath,
  };
}
