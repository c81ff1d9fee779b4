import { BOUNCE_KINDS, type BounceKind } from '@sendline/domain';
import { sqlNumber, sqlString } from '../../../clickhouse/client';
import { pageTotal, type ActivityQueries } from './query';
import { utcDay } from '../rows';

/**
 * Bounces as the activity store holds them: one row of `message_events` of a bounce kind (the domain's BOUNCE_KINDS:
 * a recipient's final failure `HardBounced`, `SoftBounced`, `PolicyRejected`, during the SMTP conversation or in a
 * DSN after it; and what came back without concluding the delivery, `DelayReported`, `AutoReplied`,
 * `SpamComplaint`). A deferral is not a bounce: the delivery is tried again.
 * Read per organization always; with the message's From and Subject, and whether the address is suppressed now.
 *
 * A bounce's id is a number (Postmark's clients read it as an integer): the first 52 bits of its event's UUID, the
 * 12 hex digits before the version digit and the one after it (`xxxxxxxx-xxxx-Vx…` → 13 hex digits), so at most
 * 2^52 − 1, inside JavaScript's safe integers. Outcome event ids are name-based (SHA-1 of the message, recipient,
 * outcome and attempt), so the id is stable across replays and the same in every listing. Two bounces of one
 * organization share an id with a chance of about n²/2^53 (n bounces in 30 days); the older is then shown first.
 */

export interface BounceRecord {
  bounceId: number;
  eventId: string;
  kind: BounceKind;
  messageId: string;
  /** Lowercased, as the message was queued for it. */
  recipient: string;
  bouncedAt: number;
  tag: string;
  smtpCode: number;
  enhancedStatus: string;
  smtpResponse: string;
  summary: string;
  /** The received mail that reported it (a DSN, an ARF report, an automatic reply); '' for an SMTP answer. */
  reportId: string;
  fromEmail: string;
  fromName: string;
  subject: string;
  messageStream: string;
  /** The address is suppressed now (Postmark's Inactive). */
  inactive: boolean;
}

/** Filters of the bounce search. Times are epoch milliseconds (bounce time); strings are matched as described. */
export interface BounceFilters {
  count: number;
  offset: number;
  kinds?: readonly BounceKind[];
  /** Only addresses suppressed now (true) or not suppressed (false). */
  inactive?: boolean;
  /** A part of the recipient's address, in any case. */
  emailContains?: string;
  tag?: string;
  messageId?: string;
  fromDate?: number;
  toDate?: number;
}

export interface BounceReader {
  search(organizationId: string, filters: BounceFilters): Promise<{ total: number; bounces: BounceRecord[] }>;
  /** The bounce of this id in the organization, or null. */
  byId(organizationId: string, bounceId: number): Promise<BounceRecord | null>;
  /** Bounces per kind over the whole retention. */
  countsByKind(organizationId: string): Promise<Record<BounceKind, number>>;
}

/** Which addresses are suppressed now (the suppression view's `suppressedAmong`). */
export type SuppressedAmong = (organizationId: string, addresses: readonly string[]) => Promise<Set<string>>;

const HEX_ID_LENGTH = 13;
/** Query text allowed when a search lists addresses (the inactive filter): 64 MiB, about two million addresses. */
const LONG_QUERY_BYTES = 64 * 1024 * 1024;

/** The 13 hex digits of an event id that make its bounce id (see above); undefined for an id that is no UUID. */
function bounceHexOf(eventId: string): string | undefined {
  const hex = `${eventId.slice(0, 8)}${eventId.slice(9, 13)}${eventId.slice(15, 16)}`.toLowerCase();
  return /^[0-9a-f]{13}$/.test(hex) ? hex : undefined;
}

/** A bounce's numeric id from its event id (0 for an event id that is no UUID: never the id of a real bounce). */
export function bounceIdOf(eventId: string): number {
  const hex = bounceHexOf(eventId);
  return hex ? Number.parseInt(hex, 16) : 0;
}

/** The same digits in SQL, to find a bounce by its id. */
const BOUNCE_HEX_SQL =
  'lower(concat(substring(event_id, 1, 8), substring(event_id, 10, 4), substring(event_id, 16, 1)))';

/**
 * A bounce as `grouped` selects it. Its aliases differ from the column names: ClickHouse sees an alias in every
 * clause, so `any(recipient) AS recipient` would turn the WHERE's `recipient` into an aggregate.
 */
interface BounceRow {
  bounce_event_id: string;
  kind: BounceKind;
  bounce_message_id: string;
  bounce_recipient: string;
  message_day: string;
  bounced_at_ms: string;
  bounce_tag: string;
  bounce_smtp_code: number;
  bounce_enhanced_status: string;
  bounce_smtp_response: string;
  bounce_summary: string;
  bounce_report_id: string;
}

interface MessageFields {
  id: string;
  from_address: string;
  from_display: string;
  message_subject: string;
  stream: string;
}

const KIND_LIST = BOUNCE_KINDS.map(sqlString).join(', ');

/** Bounces read from `message_events`, joined in a second query with their messages' From and Subject. */
export class ClickHouseBounceReader implements BounceReader {
  constructor(
    private readonly queries: ActivityQueries,
    private readonly suppressedAmong: SuppressedAmong,
  ) {}

  async search(organizationId: string, filters: BounceFilters): Promise<{ total: number; bounces: BounceRecord[] }> {
    const signal = this.queries.deadline();
    const where = this.conditions(organizationId, filters);
    if (where === undefined) return { total: 0, bounces: [] };
    if (filters.inactive !== undefined) {
      // Whether an address is suppressed lives in Redis: the addresses of the bounces found are checked there,
      // and the search keeps those on the side asked for.
      const addresses = await this.queries.query<{ recipient: string }>(
        `SELECT DISTINCT recipient FROM ${this.queries.db}.message_events FINAL WHERE ${where.join(' AND ')}`,
        signal,
      );
      const all = addresses.map((row) => row.recipient);
      const suppressed = await this.suppressedAmong(organizationId, all);
      const kept = all.filter((address) => suppressed.has(address) === filters.inactive);
      if (kept.length === 0) return { total: 0, bounces: [] };
      where.push(`recipient IN (${kept.map(sqlString).join(', ')})`);
    }
    const grouped = this.grouped(where, filters);
    // The list of addresses can outgrow ClickHouse's default 256 KiB of query text.
    const settings = filters.inactive === undefined ? undefined : { max_query_size: String(LONG_QUERY_BYTES) };
    const offset = Math.max(0, filters.offset);
    const count = Math.max(0, filters.count);
    const [counted, page] = await Promise.all([
      this.queries.query<{ total: string }>(`SELECT count() AS total FROM (${grouped})`, signal, settings),
      this.queries.query<BounceRow>(
        `SELECT * FROM (${grouped}) ORDER BY bounced_at_ms DESC, bounce_event_id DESC ` +
          `LIMIT ${sqlNumber(offset)}, ${sqlNumber(count)}`,
        signal,
        settings,
      ),
    ]);
    const total = pageTotal(Number(counted[0]?.total ?? 0), offset, count, page.length);
    return { total, bounces: await this.complete(organizationId, page, signal) };
  }

  async byId(organizationId: string, bounceId: number): Promise<BounceRecord | null> {
    if (!Number.isSafeInteger(bounceId) || bounceId <= 0 || bounceId >= 2 ** 52) return null;
    const hex = bounceId.toString(16).padStart(HEX_ID_LENGTH, '0');
    const signal = this.queries.deadline();
    const where = [
      ...this.conditions(organizationId, { count: 1, offset: 0 })!,
      `${BOUNCE_HEX_SQL} = ${sqlString(hex)}`,
    ];
    const rows = await this.queries.query<BounceRow>(
      `SELECT * FROM (${this.grouped(where, { count: 1, offset: 0 })}) ORDER BY bounced_at_ms, bounce_event_id LIMIT 1`,
      signal,
    );
    const [found] = await this.complete(organizationId, rows, signal);
    return found ?? null;
  }

  async countsByKind(organizationId: string): Promise<Record<BounceKind, number>> {
    const rows = await this.queries.query<{ kind: BounceKind; bounces: string }>(
      `SELECT type AS kind, uniqExact(event_id) AS bounces FROM ${this.queries.db}.message_events FINAL ` +
        `WHERE organization_id = ${sqlString(organizationId)} AND type IN (${KIND_LIST}) GROUP BY type`,
      this.queries.deadline(),
    );
    const counts = Object.fromEntries(BOUNCE_KINDS.map((kind) => [kind, 0])) as Record<BounceKind, number>;
    for (const row of rows) counts[row.kind] = Number(row.bounces);
    return counts;
  }

  /** The conditions on single event rows; undefined when the filters select nothing. */
  private conditions(organizationId: string, filters: BounceFilters): string[] | undefined {
    const kinds = filters.kinds ?? BOUNCE_KINDS;
    if (kinds.length === 0) return undefined;
    const where = [`organization_id = ${sqlString(organizationId)}`, `type IN (${kinds.map(sqlString).join(', ')})`];
    if (filters.emailContains) {
      where.push(`positionCaseInsensitiveUTF8(recipient, ${sqlString(filters.emailContains.trim())}) > 0`);
    }
    if (filters.tag) where.push(`tag = ${sqlString(filters.tag)}`);
    if (filters.messageId) where.push(`message_id = ${sqlString(filters.messageId)}`);
    // A row's day is its message's: never later than the bounce.
    if (filters.toDate !== undefined) where.push(`day <= ${sqlString(utcDay(filters.toDate))}`);
    return where;
  }

  /**
   * One row per bounce: an outcome decided again after a crash has the same event id and a later time (FINAL keeps
   * both rows, their sorting keys differ); the first time is the bounce's. The date filters apply to that time.
   */
  private grouped(where: readonly string[], filters: BounceFilters): string {
    const having: string[] = [];
    if (filters.fromDate !== undefined) having.push(`bounced_at_ms >= ${sqlNumber(filters.fromDate)}`);
    if (filters.toDate !== undefined) having.push(`bounced_at_ms <= ${sqlNumber(filters.toDate)}`);
    return (
      `SELECT event_id AS bounce_event_id, any(type) AS kind, any(message_id) AS bounce_message_id, ` +
      `any(recipient) AS bounce_recipient, any(day) AS message_day, min(occurred_at_ms) AS bounced_at_ms, ` +
      `any(tag) AS bounce_tag, any(smtp_code) AS bounce_smtp_code, any(enhanced_status) AS bounce_enhanced_status, ` +
      `any(smtp_response) AS bounce_smtp_response, any(summary) AS bounce_summary, ` +
      `any(report_id) AS bounce_report_id ` +
      `FROM ${this.queries.db}.message_events FINAL WHERE ${where.join(' AND ')} GROUP BY event_id` +
      (having.length > 0 ? ` HAVING ${having.join(' AND ')}` : '')
    );
  }

  /** The page's bounces with their messages' From, Subject and stream, and whether each address is suppressed. */
  private async complete(organizationId: string, rows: readonly BounceRow[], signal: AbortSignal) {
    if (rows.length === 0) return [];
    const days = [...new Set(rows.map((row) => row.message_day))];
    const ids = [...new Set(rows.map((row) => row.bounce_message_id))];
    // From, Subject and stream never change between a message's versions: no FINAL needed.
    const [messages, suppressed] = await Promise.all([
      this.queries.query<MessageFields>(
        `SELECT message_id AS id, any(from_email) AS from_address, any(from_name) AS from_display, ` +
          `any(subject) AS message_subject, any(message_stream) AS stream FROM ${this.queries.db}.messages ` +
          `WHERE organization_id = ${sqlString(organizationId)} AND day IN (${days.map(sqlString).join(', ')}) ` +
          `AND message_id IN (${ids.map(sqlString).join(', ')}) GROUP BY message_id`,
        signal,
      ),
      this.suppressedAmong(organizationId, [...new Set(rows.map((row) => row.bounce_recipient))]),
    ]);
    const byId = new Map(messages.map((message) => [message.id, message]));
    return rows.map((row): BounceRecord => {
      const message = byId.get(row.bounce_message_id);
      return {
        bounceId: bounceIdOf(row.bounce_event_id),
        eventId: row.bounce_event_id,
        kind: row.kind,
        messageId: row.bounce_message_id,
        recipient: row.bounce_recipient,
        bouncedAt: Number(row.bounced_at_ms),
        tag: row.bounce_tag,
        smtpCode: Number(row.bounce_smtp_code),
        enhancedStatus: row.bounce_enhanced_status,
        smtpResponse: row.bounce_smtp_response,
        summary: row.bounce_summary,
        reportId: row.bounce_report_id,
        fromEmail: message?.from_address ?? '',
        fromName: message?.from_display ?? '',
        subject: message?.message_subject ?? '',
        messageStream: message?.stream || 'outbound',
        inactive: suppressed.has(row.bounce_recipient),
      };
    });
  }
}
