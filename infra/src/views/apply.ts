import { slotKey, type BatchRange, type ConsumedEvent, type StoredEvent } from '../kafka/eventStore';
import type { Redis } from '../redis/client';
import { ViewBatch } from './positions';

/** Applies a batch to a view; `range` is the partition and offsets it covers when it comes from the live consumer. */
export type BatchHandler = (items: ConsumedEvent<StoredEvent>[], range?: BatchRange) => Promise<void>;

/** Events per guarded script: one script holds Redis for about a millisecond per thousand writes. */
const SCRIPT_EVENTS = 1000;

/**
 * A Redis view's handler: per partition, the view's writes and its position in one Lua script (ViewBatch), so
 * the view and its position are never apart; events at or below the position are skipped, and a view behind
 * the batch (it lost writes) throws ViewBehindError, on which the consumer goes back to where the view is.
 */
export function positionedHandler(
  redis: Redis,
  positionsKey: string,
  write: (batch: ViewBatch, event: StoredEvent) => void,
): BatchHandler {
  return async (items, range) => {
    const bySlot = new Map<string, ConsumedEvent<StoredEvent>[]>();
    for (const item of items) {
      const slot = slotKey(item.position.topic, item.position.partition);
      const list = bySlot.get(slot);
      if (list) list.push(item);
      else bySlot.set(slot, [item]);
    }
    for (const list of bySlot.values()) {
      const { topic, partition } = list[0]!.position;
      const whole = range && range.topic === topic && range.partition === partition ? range : undefined;
      let from = whole?.from ?? null;
      for (let i = 0; i < list.length; i += SCRIPT_EVENTS) {
        const chunk = list.slice(i, i + SCRIPT_EVENTS);
        const batch = new ViewBatch(positionsKey);
        for (const { event, position } of chunk) write(batch.at(position.offset), event);
        const last = i + SCRIPT_EVENTS >= list.length;
        const to = last && whole ? whole.to : chunk.at(-1)!.position.offset;
        await batch.apply(redis, { topic, partition, from, to });
        // The next chunk follows this one: everything from the offset after it is in the chunk.
        from = from === null ? null : String(BigInt(to) + 1n);
      }
    }
  };
}
