import type { MessageAccepted } from '@sendline/domain';
import { sqlString } from '../../clickhouse/client';
import type { ConsumedEvent, OffsetRanges, StoredEvent } from '../../kafka/eventStore';
import { composeMessage } from '../../smtp/compose';
import { slotKey } from '../positions';
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
  readRange(
    ranges: OffsetRanges,
    handle: (items: ConsumedEvent<StoredEvent>[]) => Promise<void>,
    timeoutMs?: number,
  ): Promise<number>;
}

export class RebuiltMessageDumps implements MessageDumps {
  constructor(
    private readonly queries: ActivityQueries,
    private readonly events: AcceptedEventSource,
    /** How long reading the one event from Kafka may take (a throwaway consumer joins its group first). */
    private readonly readTimeoutMs = 15_000,
  ) {}

  async dump(organizationId: string, messageId: string): Promise<Buffer | null> {
    const [row] = await this.queries.query<{ kafka_partition: number; kafka_offset: string }>(
      `SELECT kafka_partition, kafka_offset FROM ${this.queries.db}.message_events FINAL ` +
        `WHERE organization_id = ${sqlString(organizationId)} AND message_id = ${sqlString(messageId)} ` +
        `AND type = 'Accepted' LIMIT 1`,
      this.queries.deadline(),
    );
    if (!row) return null;
    const offset = BigInt(row.kafka_offset);
    const ranges: OffsetRanges = new Map([
      [slotKey(this.events.topics.messages, Number(row.kafka_partition)), { from: offset, to: offset + 1n }],
    ]);
    let accepted: MessageAccepted | undefined;
    await this.events.readRange(
      ranges,
      async (items) => {
        for (const { event } of items) {
          // The event at that offset is the message's own MessageAccepted, of this organization: checked anyway.
          if (
            event.type === 'MessageAccepted' &&
            event.metadata.organizationId === organizationId &&
            (event as MessageAccepted).data.messageId === messageId
          ) {
            accepted = event as MessageAccepted;
          }
        }
      },
      this.readTimeoutMs,
    );
    return accepted ? composeMessage(accepted.data) : null;
  }
}
