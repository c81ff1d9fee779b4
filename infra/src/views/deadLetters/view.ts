import type { KafkaMessage } from 'kafkajs';
import { sqlNumber, sqlString } from '../../clickhouse/client';
import type { ConsumedEvent } from '../../kafka/eventStore';
import type { ActivityQueries } from '../activity/queries/query';
import { utcDay } from '../activity/rows';

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

/** The columns of `dead_letters`, in the order rows are written. */
export const DEAD_LETTER_COLUMNS = [
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
