import type { MessageAccepted } from '@sendline/domain';
import { sqlString } from '../../../clickhouse/client';
import type { StoredEvent } from '../../../kafka/eventStore';
import { composeMessage } from '../../../smtp/compose';
import type { ActivityQueries } from './query';

/**
 * The MIME source of a sent message, rebuilt: the activity store records where the message's MessageAccepted
 * event lies in `email.messages` (partition and offset of its `Accepted` row); that one event is read back from
 * Kafka and composed by the sender's own composer (`composeMessage`), which composes the same input to the same
 * bytes (Message-ID, Date and MIME boundaries all come from the accepted message). So the source is what the
 * sender signed and sent, without the DKIM-Signature header the sender put in front of it (the API holds no
 * signing key). Available while Kafka keeps the event (33 days) and the activity store the message (30 days).
 */
export interface MessageDumps {
  /** The message's MIME source, or null when the organization has no such message (or it is gone). */
  dump(organizationId: string, messageId: string): Promise<Buffer | null>;
}

/** What the dump needs of the event store: where the message topic is, and a read of one offset. */
export interface AcceptedEventSource {
  topics: { messages: string };
  readAt(topic: string, partition: number, offset: bigint, timeoutMs?: number): Promise<StoredEvent | undefined>;
}

export class RebuiltMessageDumps implements MessageDumps {
  constructor(
    private readonly queries: ActivityQueries,
    private readonly events: AcceptedEventSource,
    /** How long reading the one event from Kafka may take (a throwaway consumer joins its group first). */
    private readonly readTimeoutMs = 10_000,
  ) {}

  async dump(organizationId: string, messageId: string): Promise<Buffer | null> {
    const [row] = await this.queries.query<{ kafka_partition: number; kafka_offset: string }>(
      `SELECT kafka_partition, kafka_offset FROM ${this.queries.db}.message_events FINAL ` +
        `WHERE organization_id = ${sqlString(organizationId)} AND message_id = ${sqlString(messageId)} ` +
        `AND type = 'Accepted' LIMIT 1`,
      this.queries.deadline(),
    );
    if (!row) return null;
    const event = await this.events.readAt(
      this.events.topics.messages,
      Number(row.kafka_partition),
      BigInt(row.kafka_offset),
      this.readTimeoutMs,
    );
    // The event at that offset is the message's own MessageAccepted, of this organization: checked anyway.
    const accepted =
      event?.type === 'MessageAccepted' &&
      event.metadata.organizationId === organizationId &&
      (event as MessageAccepted).data.messageId === messageId
        ? (event as MessageAccepted)
        : undefined;
    return accepted ? composeMessage(accepted.data) : null;
  }
}
