import type { KafkaMessage } from 'kafkajs';
import { sqlIdentifier, sqlNumber, sqlString, type ClickHouseClient } from '../../clickhouse/client';
import { migrate } from '../../clickhouse/migrations';
import type { ConsumedEvent } from '../../kafka/eventStore';
import type { BatchHandler } from '../apply';
import type { OrganizationFingerprint, RebuildableView } from '../rebuildable';
import type { ActivityQueries } from './query';
import { utcDay } from './rows';
import { ActivityTables } from './tables';

/**
 * Dead letters of the organizations' messages (table `dead_letters`, migration 0003): an event of `email.messages`
 * or `email.delivery-retries` that a consumer gave up on (the sender's unclassifiable failure, an event no handler
 * could apply after its attempts) lands on the topic's dead-letter topic with the error in its headers; the
 * projector's `deadLetters` projection writes one row per such record, so the console's Overview can list it among
 * the organization's recent problems. A record that holds no decodable event has no organization: it stays for the
 * operator on the topic only.
 */

export interface DeadLetterRow {
  organization_id: string;
  day: string;
  dead_at_ms: number;
  dead_letter_topic: string;
  dead_letter_partition: number;
  dead_letter_offset: number;
  source_topic: string;
  consumer_group: string;
  event_type: string;
  event_id: string;
  message_id: string;
  subject: string;
  error: string;
  error_code: string;
  attempts: number;
}

const COLUMNS = [
  ['organization_id', 'string'],
  ['day', 'string'],
  ['dead_at_ms', 'number'],
  ['dead_letter_topic', 'string'],
  ['dead_letter_partition', 'number'],
  ['dead_letter_offset', 'number'],
  ['source_topic', 'string'],
  ['consumer_group', 'string'],
  ['event_type', 'string'],
  ['event_id', 'string'],
  ['message_id', 'string'],
  ['subject', 'string'],
  ['error', 'string'],
  ['error_code', 'string'],
  ['attempts', 'number'],
] as const satisfies readonly (readonly [keyof DeadLetterRow, 'string' | 'number'])[];

/** A dead letter as the console shows it. */
export interface DeadLetter {
  deadAt: number;
  /** The topic the event was set aside from, and the consumer group that gave up on it (when recorded). */
  sourceTopic: string;
  consumerGroup: string;
  eventType: string;
  messageId: string;
  subject: string;
  error: string;
  errorCode: string;
  attempts: number;
}

function header(message: KafkaMessage, name: string): string {
  const value = message.headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? '' : first.toString();
}

/** The row of one dead-letter record, or null for one without an organization (an undecodable event). */
export function deadLetterRow({ event, position, message }: ConsumedEvent): DeadLetterRow | null {
  if (!event) return null;
  const data = event.data as { messageId?: unknown; subject?: unknown };
  const deadAt = Number(message.timestamp);
  const attempts = Number(header(message, 'dead-letter-attempts'));
  return {
    organization_id: event.metadata.organizationId,
    day: utcDay(deadAt),
    dead_at_ms: deadAt,
    dead_letter_topic: position.topic,
    dead_letter_partition: position.partition,
    dead_letter_offset: Number(position.offset),
    source_topic: header(message, 'dead-letter-source-topic'),
    consumer_group: header(message, 'dead-letter-group'),
    event_type: event.type,
    event_id: event.metadata.eventId,
    message_id: typeof data.messageId === 'string' ? data.messageId : '',
    subject: event.type === 'MessageAccepted' && typeof data.subject === 'string' ? data.subject : '',
    error: header(message, 'dead-letter-error'),
    error_code: header(message, 'dead-letter-error-code'),
    attempts: Number.isSafeInteger(attempts) && attempts >= 0 ? Math.min(attempts, 65_535) : 0,
  };
}

/** Writes a batch of dead-letter records to `<database>.dead_letters` (a batch written twice is one set of rows). */
export function deadLettersHandler(client: ClickHouseClient, database: string): BatchHandler {
  const tables = new ActivityTables(client, database);
  return async (items) => {
    const rows = items.map(deadLetterRow).filter((row): row is DeadLetterRow => row !== null);
    await tables.insert('dead_letters', rows, COLUMNS);
  };
}

export interface DeadLetterReader {
  /** The organization's newest dead letters, newest first, `count` at most. */
  recent(organizationId: string, count: number): Promise<DeadLetter[]>;
}

/** The organization's newest dead letters, for the console's Overview. */
export class ClickHouseDeadLetterReader implements DeadLetterReader {
  constructor(private readonly queries: ActivityQueries) {}

  async recent(organizationId: string, count: number): Promise<DeadLetter[]> {
    const rows = await this.queries.query<DeadLetterRow>(
      `SELECT * FROM ${this.queries.db}.dead_letters FINAL WHERE organization_id = ${sqlString(organizationId)} ` +
        `ORDER BY dead_at_ms DESC, dead_letter_offset DESC LIMIT ${sqlNumber(count)}`,
      this.queries.deadline(),
    );
    return rows.map((row) => ({
      deadAt: Number(row.dead_at_ms),
      sourceTopic: row.source_topic,
      consumerGroup: row.consumer_group,
      eventType: row.event_type,
      messageId: row.message_id,
      subject: row.subject,
      error: row.error,
      errorCode: row.error_code,
      attempts: Number(row.attempts),
    }));
  }
}

/** The dead letters' fingerprint per organization: how many, and a checksum of what the console shows. */
async function deadLetterFingerprints(
  client: ClickHouseClient,
  db: string,
): Promise<Map<string, OrganizationFingerprint>> {
  const rows = await (
    await client.query({
      query:
        `SELECT organization_id, count() AS rows, toString(groupBitXor(cityHash64(dead_at_ms, dead_letter_topic, ` +
        `dead_letter_partition, dead_letter_offset, source_topic, consumer_group, event_type, event_id, message_id, ` +
        `subject, error, error_code, attempts))) AS checksum FROM ${db}.dead_letters FINAL GROUP BY organization_id`,
      format: 'JSONEachRow',
    })
  ).json<{ organization_id: string; rows: string; checksum: string }>();
  return new Map(
    rows.map((row) => [
      row.organization_id,
      {
        organizationId: row.organization_id,
        count: Number(row.rows),
        checksum: BigInt(row.checksum).toString(16),
        counts: { deadLetters: Number(row.rows) },
      },
    ]),
  );
}

/**
 * The dead letters rebuilt from the dead-letter topics into a fresh database (`<database>_replay_<id>`, created by
 * the migrations) and swapped in with one RENAME TABLE, as the activity store's replay does.
 */
export function rebuildDeadLetters(client: ClickHouseClient, database: string, id: string): RebuildableView {
  const live = sqlIdentifier(database);
  const rebuilt = sqlIdentifier(`${database}_dead_letters_replay_${id}`);
  const intoRebuilt = deadLettersHandler(client, rebuilt);
  const intoLive = deadLettersHandler(client, database);
  const drop = () => client.command({ query: `DROP DATABASE IF EXISTS ${rebuilt}` });
  return {
    live,
    rebuilt,
    prepare: async () => {
      await drop();
      await migrate(client, rebuilt);
    },
    apply: intoRebuilt,
    settle: async () => undefined,
    fingerprints: async () => {
      const [a, b] = await Promise.all([deadLetterFingerprints(client, live), deadLetterFingerprints(client, rebuilt)]);
      return { live: a, rebuilt: b };
    },
    swap: async () => {
      await client.command({
        query:
          `RENAME TABLE ${live}.dead_letters TO ${rebuilt}.dead_letters_previous, ` +
          `${rebuilt}.dead_letters TO ${live}.dead_letters`,
      });
    },
    applyToLive: intoLive,
    settleLive: async () => undefined,
    discard: async () => {
      await drop();
    },
    retire: async (keep) => {
      if (keep) return `${rebuilt}.dead_letters_previous`;
      await drop();
      return undefined;
    },
  };
}
