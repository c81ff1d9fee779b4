import { BOUNCE_TYPE_OF_KIND, type BounceKind, type MessageListingStatus } from '@sendline/domain';
import { ServiceUnavailableError } from '../../../availability';
import { sqlNumber, sqlString, type ClickHouseClient } from '../../../clickhouse/client';
import { bounceIdOf } from './bounces';
import { ActivityQueries, pageTotal } from './query';
import { utcDay, type MessageRow } from '../rows';
import type {
  ActivityEvent,
  ActivityFilters,
  ActivityReader,
  AddressEntry,
  MessageDetails,
  MessageSummary,
} from './types';

export const LISTING_STATUSES: readonly MessageListingStatus[] = [
  'Queued',
  'Sent',
  'Deferred',
  'Delivered',
  'PartiallyDelivered',
  'Bounced',
  'Rejected',
];

/**
 * The listing statuses a `status` filter selects: one of LISTING_STATUSES, in any
 * case. Postmark's own values keep their Postmark meaning, since Postmark clients
 * send them: `queued` is Queued, `sent` is every message past Queued. A value that
 * is none of these selects nothing.
 */
export function statusesOfFilter(filter: string): MessageListingStatus[] {
  const wanted = filter.trim().toLowerCase();
  if (wanted === 'sent') return LISTING_STATUSES.filter((status) => status !== 'Queued');
  return LISTING_STATUSES.filter((status) => status.toLowerCase() === wanted);
}

const SUMMARY_COLUMNS = [
  'message_id',
  'received_at_ms',
  'from_email',
  'from_name',
  'subject',
  'tag',
  'message_stream',
  'to_json',
  'cc_json',
  'bcc_json',
  'recipients',
  'attachment_names',
  'status',
  'track_opens',
  'track_links',
  'metadata_json',
] as const;

/**
 * A row of `messages` as read back: the columns selected, as MessageRow types them, except that ClickHouse
 * writes UInt64 values as strings in JSON.
 */
type ReadBack<K extends keyof MessageRow> = { [C in K]: C extends UInt64Column ? string : MessageRow[C] };
/** The events (as message_events names them) that move a message's status, hence its state's `updated_at_ms`. */
const STATE_EVENT_TYPES = new Set(['Sent', 'Delivered', 'HardBounced', 'SoftBounced', 'PolicyRejected']);
/**
 * The waits before a message's state is read again while its batch's events are in and its state is not (some 0.8 s
 * in all), within half the read's deadline: the rest is left for the queries, and the read never fails on the wait.
 */
const STATE_REREAD_WAITS_MS = [25, 50, 100, 200, 400];

type UInt64Column = 'received_at_ms' | 'updated_at_ms';

type SummaryRecord = ReadBack<(typeof SUMMARY_COLUMNS)[number]> & { status: MessageListingStatus };

const DETAILS_COLUMNS = [
  'day',
  'text_body',
  'html_body',
  'template_id',
  'template_version',
  'reply_to',
  'headers_json',
  'updated_at_ms',
] as const;

type DetailsRecord = SummaryRecord & ReadBack<(typeof DETAILS_COLUMNS)[number]>;

interface EventRecord {
  day: string;
  event_id: string;
  type: string;
  recipient: string;
  occurred_at_ms: string;
  smtp_code: number;
  smtp_response: string;
  destination_server: string;
  summary: string;
  reason: string;
  report_id: string;
  user_agent: string;
  return_path: string;
}

/** A message of a page: its id and when it was received (its place in the sorting key). */
interface PageId {
  id: string;
  at: number;
}

/**
 * The rows of these messages (every version), by their sorting key: only their days' partitions and the index's
 * granules holding their times are read, wherever the messages are in the organization's history.
 */
function byKey(organizationId: string, messages: readonly PageId[]): string {
  const days = new Set(messages.map((m) => sqlString(utcDay(m.at))));
  const seconds = new Set(messages.map((m) => `toDateTime(${sqlNumber(Math.floor(m.at / 1000))})`));
  return (
    `organization_id = ${sqlString(organizationId)} AND day IN (${[...days].join(', ')}) ` +
    `AND received_at IN (${[...seconds].join(', ')}) ` +
    `AND message_id IN (${messages.map((m) => sqlString(m.id)).join(', ')})`
  );
}

/** Messages read by key in one query: their ids and times stay well under ClickHouse's 256 KiB of query text. */
const KEYS_PER_QUERY = 2000;

function summaryOf(record: SummaryRecord): MessageSummary {
  return {
    messageId: record.message_id,
    receivedAt: Number(record.received_at_ms),
    fromEmail: record.from_email,
    fromName: record.from_name,
    subject: record.subject,
    tag: record.tag,
    messageStream: record.message_stream,
    to: JSON.parse(record.to_json) as AddressEntry[],
    cc: JSON.parse(record.cc_json) as AddressEntry[],
    bcc: JSON.parse(record.bcc_json) as AddressEntry[],
    recipients: record.recipients,
    attachmentNames: record.attachment_names,
    status: record.status,
    trackOpens: Number(record.track_opens) === 1,
    trackLinks: record.track_links,
    metadata: JSON.parse(record.metadata_json) as Record<string, string>,
  };
}

/**
 * Each event once, at its first time. An event decided again carries the same event id (the sender's MessageSent
 * appended again after a fault, an outcome decided again after a crash), but a later time: its row has another
 * sorting key, so FINAL keeps both. The rows come oldest first.
 */
function firstOfEach(records: readonly EventRecord[]): EventRecord[] {
  const seen = new Set<string>();
  return records.filter((record) => !seen.has(record.event_id) && seen.add(record.event_id));
}

/**
 * Postmark's name of an event type, and the Details it shows (values are strings). What came back after the SMTP
 * conversation shows as Postmark would: a DSN's refusal as the conversation's (Bounced, Rejected), a DSN's delay
 * notice as Transient, a spam complaint as SpamComplaint, an automatic reply as AutoResponder; each names the bounce
 * it is in the bounce endpoints (BounceID, BounceType) and the received mail that reported it (ReportID).
 * An outcome also shows, as `ReturnPath`, the envelope sender its attempt was made with (ours: Postmark has no such
 * field), when recorded.
 */
function activityEventsOf(record: EventRecord, activeRecipients: readonly string[]): ActivityEvent[] {
  const occurredAt = Number(record.occurred_at_ms);
  const returnPath: Record<string, string> = record.return_path ? { ReturnPath: record.return_path } : {};
  const one = (type: string, details: Record<string, string>): ActivityEvent[] => [
    { type, recipient: record.recipient, occurredAt, details: { ...details, ...returnPath } },
  ];
  const smtpCode = record.smtp_code ? String(record.smtp_code) : '';
  // Only for what a report said, so that an answer during the conversation shows the Details it always had.
  const report: Record<string, string> = record.report_id ? { ReportID: record.report_id } : {};
  const bounce = (kind: BounceKind) => ({
    // The bounce's ID in the bounce endpoints (GET /bounces/{id}), as a string like every Details value.
    BounceID: String(bounceIdOf(record.event_id)),
    BounceType: BOUNCE_TYPE_OF_KIND[kind].type,
  });
  switch (record.type) {
    case 'Accepted':
    case 'Sent':
      // Recorded once per message; shown for each recipient, as the other events are.
      return activeRecipients.map((recipient) => ({ type: record.type, recipient, occurredAt, details: {} }));
    case 'Delivered':
      return one('Delivered', {
        DeliveryMessage: record.smtp_response,
        DestinationServer: record.destination_server,
        DestinationIP: '',
      });
    case 'Deferred':
      return one('Transient', {
        DeliveryMessage: record.smtp_response || record.summary,
        DestinationServer: record.destination_server,
        DestinationIP: '',
      });
    case 'HardBounced':
    case 'SoftBounced':
      return one('Bounced', {
        Summary: record.summary,
        ...bounce(record.type),
        DeliveryMessage: record.smtp_response,
        SmtpCode: smtpCode,
        ...report,
      });
    case 'PolicyRejected':
      return one('Rejected', {
        Summary: record.summary,
        DeliveryMessage: record.smtp_response,
        SmtpCode: smtpCode,
        ...report,
      });
    case 'DelayReported':
      return one('Transient', {
        DeliveryMessage: record.smtp_response || record.summary,
        DestinationServer: '',
        DestinationIP: '',
        Summary: record.summary,
        ...bounce('DelayReported'),
        ...report,
      });
    case 'AutoReplied':
      return one('AutoResponder', { Summary: record.summary, ...bounce('AutoReplied'), ...report });
    case 'SpamComplaint':
      return one('SpamComplaint', {
        Summary: record.summary,
        ...bounce('SpamComplaint'),
        FeedbackType: record.reason,
        UserAgent: record.user_agent,
        ...report,
      });
    default:
      return one(record.type, {});
  }
}

/**
 * The API's view of the activity store. Every query is scoped to one organization
 * and built from escaped literals (ClickHouse 18.16 has no query parameters).
 * A message's versions not merged yet are all rows of `messages`: a search keeps
 * the latest version of each (what FINAL keeps) without reading the organization's
 * rows with FINAL, which takes seconds at a million messages; the status, which
 * changes between versions, is the latest version's.
 */
export class ClickHouseActivityReader implements ActivityReader {
  private readonly queries: ActivityQueries;
  private readonly db: string;

  constructor(
    private readonly client: ClickHouseClient,
    database: string,
    /** How long one read (all its queries) may take (default 1500 ms): see ActivityQueries. */
    options: { timeoutMs?: number } = {},
  ) {
    this.queries = new ActivityQueries(client, database, options);
    this.db = this.queries.db;
  }

  async list(organizationId: string, filters: ActivityFilters): Promise<{ total: number; messages: MessageSummary[] }> {
    const where = [`organization_id = ${sqlString(organizationId)}`];
    if (filters.fromDate !== undefined) {
      where.push(`day >= ${sqlString(utcDay(filters.fromDate))}`, `received_at_ms >= ${sqlNumber(filters.fromDate)}`);
    }
    if (filters.toDate !== undefined) {
      where.push(`day <= ${sqlString(utcDay(filters.toDate))}`, `received_at_ms <= ${sqlNumber(filters.toDate)}`);
    }
    if (filters.recipient) {
      const address = sqlString(filters.recipient.trim().toLowerCase());
      where.push(`(has(recipients, ${address}) OR has(suppressed_recipients, ${address}))`);
    }
    if (filters.fromEmail) where.push(`lowerUTF8(from_email) = ${sqlString(filters.fromEmail.trim().toLowerCase())}`);
    if (filters.tag) where.push(`tag = ${sqlString(filters.tag)}`);
    if (filters.subject) where.push(`positionCaseInsensitiveUTF8(subject, ${sqlString(filters.subject)}) > 0`);
    if (filters.messageStream) where.push(`message_stream = ${sqlString(filters.messageStream)}`);
    let statuses: MessageListingStatus[] | undefined;
    if (filters.status) {
      statuses = statusesOfFilter(filters.status);
      if (statuses.length === 0) return { total: 0, messages: [] };
    }
    const signal = this.queries.deadline();
    const offset = Math.max(0, filters.offset);
    const wanted = offset + Math.max(0, filters.count);
    const [counted, ids] = await Promise.all([
      this.countMessages(where, statuses, signal),
      statuses
        ? this.pageIdsByStatus(organizationId, where, statuses, wanted, signal)
        : this.pageIdsByImmutableFields(where, wanted, signal),
    ]);
    // The page's query reads the ids of every message up to the page's end (seen by a client polling for its first
    // message: a TotalCount of 1 with no message in the page).
    const total = pageTotal(counted, 0, wanted, ids.length);
    const page = ids.slice(offset, wanted);
    if (page.length === 0) return { total, messages: [] };
    const messages = await this.readPage(organizationId, page, signal);
    // A version written since the page's ids were chosen may have moved a message out of the status searched for.
    return { total, messages: statuses ? messages.filter((m) => statuses.includes(m.status)) : messages };
  }

  /**
   * A search on fields a message never changes (everything but the status): no FINAL over the organization's rows,
   * which costs seconds at a million messages. A message's versions share its sorting key, so they are neighbours
   * in the order: the first `wanted` distinct ids of a top-N read of two columns are the page's and those before it.
   */
  private async pageIdsByImmutableFields(where: string[], wanted: number, signal: AbortSignal): Promise<PageId[]> {
    const matching = `FROM ${this.db}.messages WHERE ${where.join(' AND ')}`;
    // Versions not merged yet repeat an id: read more until `wanted` distinct ids are in, or the rows run out.
    for (let limit = wanted + 100; ; limit *= 2) {
      const rows = await this.query<{ message_id: string; received_at_ms: string }>(
        `SELECT message_id, received_at_ms ${matching} ORDER BY received_at_ms DESC, message_id DESC ` +
          `LIMIT ${sqlNumber(limit)}`,
        signal,
      );
      const seen = new Map<string, number>();
      for (const row of rows) if (!seen.has(row.message_id)) seen.set(row.message_id, Number(row.received_at_ms));
      if (seen.size >= wanted || rows.length < limit) return [...seen].slice(0, wanted).map(([id, at]) => ({ id, at }));
    }
  }

  /**
   * A status search without FINAL. A message whose latest version has one of `statuses` has a row with it, so the
   * newest `limit` rows with those statuses (two columns read, however stale) hold every match down to the last of
   * them, in order: each candidate is kept if its latest version (all its rows, read by their sorting key) still
   * has one of them. Too few for the page, and rows remain: more rows, the candidates verified kept.
   */
  private async pageIdsByStatus(
    organizationId: string,
    where: string[],
    statuses: readonly MessageListingStatus[],
    wanted: number,
    signal: AbortSignal,
  ): Promise<PageId[]> {
    // The latest status of each candidate seen, kept when more rows are read.
    const statusOf = new Map<string, MessageListingStatus>();
    for (let limit = wanted + 100; ;) {
      const rows = await this.query<{ message_id: string; received_at_ms: string }>(
        `SELECT message_id, received_at_ms FROM ${this.db}.messages WHERE ${where.join(' AND ')} ` +
          `AND status IN (${statuses.map(sqlString).join(', ')}) ` +
          `ORDER BY received_at_ms DESC, message_id DESC LIMIT ${sqlNumber(limit)}`,
        signal,
      );
      const candidates = new Map<string, number>();
      for (const row of rows) {
        if (!candidates.has(row.message_id)) candidates.set(row.message_id, Number(row.received_at_ms));
      }
      if (candidates.size === 0) return [];
      const entries = [...candidates].map(([id, at]) => ({ id, at }));
      const unknown = entries.filter((entry) => !statusOf.has(entry.id));
      for (let i = 0; i < unknown.length; i += KEYS_PER_QUERY) {
        const latest = await this.query<{ message_id: string; latest: MessageListingStatus }>(
          `SELECT message_id, argMax(status, version) AS latest FROM ${this.db}.messages ` +
            `WHERE ${byKey(organizationId, unknown.slice(i, i + KEYS_PER_QUERY))} GROUP BY message_id`,
          signal,
        );
        for (const row of latest) statusOf.set(row.message_id, row.latest);
      }
      const matches = entries.filter((entry) => {
        const status = statusOf.get(entry.id);
        return status !== undefined && statuses.includes(status);
      });
      if (matches.length >= wanted || rows.length < limit) return matches.slice(0, wanted);
      // As many more rows as the share of candidates still matching says are missing (a tenth more), twice at most.
      const needed = matches.length > 0 ? Math.ceil((limit * wanted * 1.1) / matches.length) + 100 : Infinity;
      limit = Math.min(limit * 2, needed);
    }
  }

  /**
   * How many messages match `where` (and, given `statuses`, whose latest version has one of them), without FINAL.
   * A day (a partition) whose rows are one merged part holds one row per message (ReplacingMergeTree keeps the
   * latest version when it merges): its rows are counted as they are. Only the other days (recent ones, whose
   * versions are not merged yet) are grouped by message. If a counted day's parts changed meanwhile (a new version
   * written), the count is done again; after three tries every day is grouped.
   */
  private async countMessages(
    where: string[],
    statuses: readonly MessageListingStatus[] | undefined,
    signal: AbortSignal,
  ): Promise<number> {
    const matching = `FROM ${this.db}.messages WHERE ${where.join(' AND ')}`;
    const inStatuses = statuses && `IN (${statuses.map(sqlString).join(', ')})`;
    const count = async (merged: Map<string, string>): Promise<number> => {
      const days = [...merged.keys()].map(sqlString).join(', ');
      const [plain, grouped] = await Promise.all([
        merged.size === 0
          ? []
          : this.query<{ total: string }>(
              `SELECT count() AS total ${matching} AND day IN (${days})${inStatuses ? ` AND status ${inStatuses}` : ''}`,
              signal,
            ),
        this.query<{ total: string }>(
          inStatuses
            ? `SELECT count() AS total FROM (SELECT argMax(status, version) AS latest ${matching}` +
                `${merged.size ? ` AND day NOT IN (${days})` : ''} GROUP BY message_id) WHERE latest ${inStatuses}`
            : `SELECT uniqExact(message_id) AS total ${matching}${merged.size ? ` AND day NOT IN (${days})` : ''}`,
          signal,
        ),
      ]);
      return Number(plain[0]?.total ?? 0) + Number(grouped[0]?.total ?? 0);
    };
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const merged = await this.mergedDays(signal);
      const total = await count(merged);
      const after = await this.mergedDays(signal);
      if ([...merged].every(([day, part]) => after.get(day) === part)) return total;
    }
    return count(new Map());
  }

  /** The days of `messages` held in one merged part (level above 0: a merge's result), each with its part's name. */
  private async mergedDays(signal: AbortSignal): Promise<Map<string, string>> {
    const rows = await this.query<{ day: string; part: string }>(
      `SELECT toString(min(min_date)) AS day, any(name) AS part FROM system.parts ` +
        `WHERE database = ${sqlString(this.db)} AND table = 'messages' AND active ` +
        `GROUP BY partition HAVING count() = 1 AND min(level) > 0 AND min(min_date) = max(max_date)`,
      signal,
    );
    return new Map(rows.map((row) => [row.day, row.part]));
  }

  /** The page's rows read whole, by their ids and times: the latest version of each (what FINAL keeps), in order. */
  private async readPage(organizationId: string, page: PageId[], signal: AbortSignal): Promise<MessageSummary[]> {
    const rows = await this.query<SummaryRecord & { version: string }>(
      `SELECT ${SUMMARY_COLUMNS.join(', ')}, version FROM ${this.db}.messages WHERE ${byKey(organizationId, page)}`,
      signal,
    );
    const latest = new Map<string, SummaryRecord & { version: string }>();
    for (const row of rows) {
      const kept = latest.get(row.message_id);
      if (!kept || BigInt(row.version) >= BigInt(kept.version)) latest.set(row.message_id, row);
    }
    return page.flatMap((entry) => {
      const row = latest.get(entry.id);
      return row ? [summaryOf(row)] : [];
    });
  }

  async details(organizationId: string, messageId: string): Promise<MessageDetails | null> {
    const org = sqlString(organizationId);
    const id = sqlString(messageId);
    const signal = this.queries.deadline();
    const waitsEndAt = Date.now() + this.queries.timeoutMs / 2;
    // message_events is ordered by (organization, message): its rows give the message's day, so
    // the message row is read from that day's partition only.
    const readEvents = () =>
      this.query<EventRecord>(
        `SELECT day, event_id, type, recipient, occurred_at_ms, smtp_code, smtp_response, destination_server, summary, ` +
          `reason, report_id, user_agent, return_path ` +
          `FROM ${this.db}.message_events FINAL WHERE organization_id = ${org} AND message_id = ${id} ` +
          `ORDER BY occurred_at_ms, kafka_partition, kafka_offset, event_id`,
        signal,
      );
    let events = await readEvents();
    const day = events[0]?.day;
    const readRecord = async () =>
      (
        await this.query<DetailsRecord>(
          `SELECT ${[...SUMMARY_COLUMNS, ...DETAILS_COLUMNS].join(', ')} ` +
            `FROM ${this.db}.messages FINAL WHERE ${day ? `day = ${sqlString(day)} AND ` : ''}` +
            `organization_id = ${org} AND message_id = ${id} LIMIT 1`,
          signal,
        )
      )[0];
    let record = await readRecord();
    if (!record) return null;
    // The writer stores a batch's events before the messages' new state, so the status and its events agree once
    // both are read past the same batch. A state newer than the last event read means a batch landed between the
    // two reads: the events are read again. An event that moves the status (Delivered, a bounce) newer than the state
    // means its batch's state is being written: the state is read again (STATE_REREAD_WAITS_MS); past that, or if a
    // read again fails, the answer is what was read.
    const lastEventAt = events.reduce((latest, event) => Math.max(latest, Number(event.occurred_at_ms)), 0);
    if (Number(record.updated_at_ms) > lastEventAt) events = await readEvents();
    for (const wait of STATE_REREAD_WAITS_MS) {
      const stateAt = Number(record.updated_at_ms);
      if (!events.some((event) => STATE_EVENT_TYPES.has(event.type) && Number(event.occurred_at_ms) > stateAt)) break;
      if (Date.now() + wait > waitsEndAt) break;
      await new Promise((resolve) => setTimeout(resolve, wait));
      record = (await readRecord().catch(() => undefined)) ?? record;
    }
    const summary = summaryOf(record);
    return {
      ...summary,
      textBody: record.text_body,
      htmlBody: record.html_body,
      template: Number(record.template_id)
        ? { templateId: Number(record.template_id), version: Number(record.template_version) }
        : null,
      replyTo: record.reply_to,
      headers: JSON.parse(record.headers_json) as { name: string; value: string }[],
      events: firstOfEach(events).flatMap((event) => activityEventsOf(event, summary.recipients)),
    };
  }

  async ping(signal?: AbortSignal): Promise<void> {
    const answer = await this.client.ping({ select: false, ...(signal ? { abort_signal: signal } : {}) });
    if (!answer.success) {
      throw new ServiceUnavailableError('clickhouse', `the activity store does not answer: ${String(answer.error)}`, {
        retriable: true,
        cause: answer.error,
      });
    }
  }

  private query<T>(query: string, signal: AbortSignal): Promise<T[]> {
    return this.queries.query<T>(query, signal);
  }
}
