import { InfrastructureError } from '../../errors';

/**
 * What the consumer loop asks of a handler that keeps its own position with its data (a Redis view, say): the
 * event store defines it, the handler's store implements it (infra/src/views/positions.ts for the views), and the
 * caller passes it in (`ConsumeOptions.positions`, `handleBatch`'s `range`). The event store knows no store.
 */

/** A partition of a topic, as one key: `<topic>:<partition>`. */
export const slotKey = (topic: string, partition: number) => `${topic}:${partition}`;

/** Where a batch of one partition comes from: what a handler keeping its position checks it against. */
export interface BatchRange {
  topic: string;
  partition: number;
  /**
   * The offset the reader asked for: every event of the partition from it up to the batch's last one is in the
   * batch (Kafka skips offsets compaction removed). Null when the reader makes no such promise (a replay's reads).
   */
  from: string | null;
  /** The batch's last offset (events the handler ignores or could not decode included). */
  to: string;
}

/** Where the handler's store stands, per partition (see ConsumeOptions.positions). */
export interface ConsumerPositions {
  /** The offset of the last event the store applied, or null when it holds none. */
  applied(topic: string, partition: number): Promise<bigint | null>;
  /** Records that every event up to `offset` was dealt with (dead-lettered or undecodable ones included). */
  advance(topic: string, partition: number, offset: string): Promise<void>;
}

/**
 * A batch handler's store does not reach the batch: events before it are missing from the store (it lost writes).
 * The consumer seeks the partition back to `nextOffset` and commits nothing. A store throws its own subclass.
 */
export class StoreBehindError extends InfrastructureError {
  constructor(
    code: string,
    message: string,
    readonly topic: string,
    readonly partition: number,
    /** The next offset the store needs. */
    readonly nextOffset: bigint,
  ) {
    super(code, message, { retriable: true });
    this.name = 'StoreBehindError';
  }
}
