import { sqlNumber, sqlString } from '../../clickhouse/client';
import type { ActivityQueries } from '../activity/queries/query';
import type { InboundRow } from './rows';

/** An inbound message as the activity store holds it; `bypassed`: a blocked one let through on request. */
export interface StoredInboundMessage {
  organizationId: string;
  messageId: string;
  receivedAt: number;
  status: 'Queued' | 'Blocked';
  bypassed: boolean;
  blockedReason: string;
  from: string;
  fromName: string;
  to: string;
  cc: string;
  subject: string;
  mailboxHash: string;
  tag: string;
  originalRecipient: string;
  sizeBytes: number;
  payload: string;
}

/** Postmark's search filters of GET /messages/inbound, in the store's terms. */
export interface InboundSearch {
  count: number;
  offset: number;
  recipient?: string;
  fromEmail?: string;
  tag?: string;
  subject?: string;
  mailboxHash?: string;
  /** 'blocked': only blocked messages not bypassed; 'notBlocked': the others. */
  blocked?: boolean;
  /** Epoch ms, inclusive / exclusive. */
  from?: number;
  to?: number;
}

export interface InboundMessageReader {
  search(organizationId: string, search: InboundSearch): Promise<{ total: number; messages: StoredInboundMessage[] }>;
  /** One message of the organization, or null (unknown, too old, another organization's). */
  get(organizationId: string, messageId: string): Promise<StoredInboundMessage | null>;
}

const COLUMNS =
  'organization_id, received_at_ms, message_id, status, blocked_reason, from_address, from_name, to_addresses, ' +
  'cc_addresses, subject, mailbox_hash, tag, original_recipient, size_bytes';

/** The inbound messages in ClickHouse (`inbound_messages`, `inbound_bypasses`), every value an escaped literal. */
export class ClickHouseInboundReader implements InboundMessageReader {
  constructor(private readonly queries: ActivityQueries) {}

  async search(
    organizationId: string,
    search: InboundSearch,
  ): Promise<{ total: number; messages: StoredInboundMessage[] }> {
    const db = this.queries.db;
    const org = sqlString(organizationId);
    const bypassed = `(SELECT message_id FROM ${db}.inbound_bypasses FINAL WHERE organization_id = ${org})`;
    const where = [`organization_id = ${org}`];
    const lower = (value: string) => sqlString(value.toLowerCase());
    if (search.recipient) {
      where.push(
        `(position(lower(to_addresses), ${lower(search.recipient)}) > 0 OR position(lower(cc_addresses), ${lower(search.recipient)}) > 0 OR lower(original_recipient) = ${lower(search.recipient)})`,
      );
    }
    if (search.fromEmail) where.push(`lower(from_address) = ${lower(search.fromEmail)}`);
    if (search.tag) where.push(`tag = ${sqlString(search.tag)}`);
    if (search.subject) where.push(`position(lower(subject), ${lower(search.subject)}) > 0`);
    if (search.mailboxHash) where.push(`mailbox_hash = ${sqlString(search.mailboxHash)}`);
    if (search.from !== undefined) where.push(`received_at_ms >= ${sqlNumber(search.from)}`);
    if (search.to !== undefined) where.push(`received_at_ms < ${sqlNumber(search.to)}`);
    if (search.blocked === true) where.push(`status = 'Blocked' AND message_id NOT IN ${bypassed}`);
    if (search.blocked === false) where.push(`(status != 'Blocked' OR message_id IN ${bypassed})`);
    const filter = where.join(' AND ');
    const signal = this.queries.deadline();
    const [counted, rows] = await Promise.all([
      this.queries.query<{ total: string }>(
        `SELECT count() AS total FROM ${db}.inbound_messages FINAL WHERE ${filter}`,
        signal,
      ),
      this.queries.query<InboundRow>(
        `SELECT ${COLUMNS}, payload FROM ${db}.inbound_messages FINAL WHERE ${filter} ` +
          `ORDER BY received_at_ms DESC, message_id LIMIT ${sqlNumber(search.offset)}, ${sqlNumber(search.count)}`,
        signal,
      ),
    ]);
    const messages = await this.withBypasses(organizationId, rows, signal);
    return { total: Number(counted[0]?.total ?? 0), messages };
  }

  async get(organizationId: string, messageId: string): Promise<StoredInboundMessage | null> {
    const signal = this.queries.deadline();
    const rows = await this.queries.query<InboundRow>(
      `SELECT ${COLUMNS}, payload FROM ${this.queries.db}.inbound_messages FINAL ` +
        `WHERE organization_id = ${sqlString(organizationId)} AND message_id = ${sqlString(messageId)} LIMIT 1`,
      signal,
    );
    const [message] = await this.withBypasses(organizationId, rows, signal);
    return message ?? null;
  }

  private async withBypasses(
    organizationId: string,
    rows: Partial<InboundRow>[],
    signal: AbortSignal,
  ): Promise<StoredInboundMessage[]> {
    const blocked = rows.filter((row) => row.status === 'Blocked').map((row) => sqlString(row.message_id!));
    const bypassed = new Set<string>();
    if (blocked.length > 0) {
      const found = await this.queries.query<{ message_id: string }>(
        `SELECT message_id FROM ${this.queries.db}.inbound_bypasses FINAL WHERE organization_id = ` +
          `${sqlString(organizationId)} AND message_id IN (${blocked.join(', ')})`,
        signal,
      );
      for (const row of found) bypassed.add(row.message_id);
    }
    return rows.map((row) => ({
      organizationId: row.organization_id!,
      messageId: row.message_id!,
      receivedAt: Number(row.received_at_ms),
      status: row.status === 'Blocked' ? 'Blocked' : 'Queued',
      bypassed: bypassed.has(row.message_id!),
      blockedReason: row.blocked_reason ?? '',
      from: row.from_address ?? '',
      fromName: row.from_name ?? '',
      to: row.to_addresses ?? '',
      cc: row.cc_addresses ?? '',
      subject: row.subject ?? '',
      mailboxHash: row.mailbox_hash ?? '',
      tag: row.tag ?? '',
      originalRecipient: row.original_recipient ?? '',
      sizeBytes: Number(row.size_bytes ?? 0),
      payload: row.payload ?? '',
    }));
  }
}
