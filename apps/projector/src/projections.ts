import {
  ACCOUNT_EVENT_TYPES,
  SUPPRESSION_EVENT_TYPES,
  type AccountEvent,
  type MessageAccepted,
  type SuppressionEvent,
} from '@sendline/domain';
import {
  isActivityEvent,
  slotKey,
  ViewBatch,
  type AccountsView,
  type AllowanceView,
  type BatchRange,
  type ClickHouseActivityWriter,
  type ConsumedEvent,
  type Redis,
  type StoredEvent,
  type SuppressionView,
  type TopicNames,
} from '@sendline/infra';

/** The views the projector keeps, each from its topic. */
export type ProjectionName = 'accounts' | 'suppressions' | 'allowance' | 'activity';
export const PROJECTIONS: readonly ProjectionName[] = ['accounts', 'suppressions', 'allowance', 'activity'];
/** The views kept in Redis: each keeps its position with its data (`<ns>:positions:<view>`). */
export const REDIS_PROJECTIONS: readonly ProjectionName[] = ['accounts', 'suppressions', 'allowance'];

export function topicsOf(projection: ProjectionName, topics: TopicNames): string[] {
  switch (projection) {
    case 'accounts':
      return [topics.accounts];
    case 'suppressions':
      return [topics.suppressions];
    case 'allowance':
    case 'activity':
      return [topics.messages];
  }
}

/** The consumer group of a projection: `projector-accounts`, `projector-suppressions`, `projector-allowance`, `projector-activity`. */
export function groupOf(projection: ProjectionName, prefix = 'projector'): string {
  return `${prefix}-${projection}`;
}

/** Applies a batch; `range` is the partition and offsets it covers when it comes from the live consumer. */
export type BatchHandler = (items: ConsumedEvent<StoredEvent>[], range?: BatchRange) => Promise<void>;

const accountTypes = new Set<string>(ACCOUNT_EVENT_TYPES);
const suppressionTypes = new Set<string>(SUPPRESSION_EVENT_TYPES);

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

/** Applies a batch of the `accounts` topic to the accounts view (events of other types are skipped). */
export function accountsHandler(view: AccountsView, redis: Redis, positionsKey: string): BatchHandler {
  return positionedHandler(redis, positionsKey, (batch, event) => {
    if (accountTypes.has(event.type)) view.write(batch, event as AccountEvent);
  });
}

/** Applies a batch of `email.suppressions` to the suppression view. */
export function suppressionsHandler(view: SuppressionView, redis: Redis, positionsKey: string): BatchHandler {
  return positionedHandler(redis, positionsKey, (batch, event) => {
    if (suppressionTypes.has(event.type)) view.write(batch, event as SuppressionEvent);
  });
}

/** Counts each MessageAccepted of `email.messages` in the allowance view, once per MessageID. */
export function allowanceHandler(view: AllowanceView, redis: Redis, positionsKey: string): BatchHandler {
  return positionedHandler(redis, positionsKey, (batch, event) => {
    if (event.type === 'MessageAccepted') view.write(batch, event as MessageAccepted);
  });
}

/** Hands a batch of `email.messages` to the activity writer; resolves once its rows are in ClickHouse. */
export function activityHandler(writer: ClickHouseActivityWriter): BatchHandler {
  return (items) =>
    writer.write(
      items.flatMap(({ event, position }) =>
        isActivityEvent(event) ? [{ event, position: { partition: position.partition, offset: position.offset } }] : [],
      ),
    );
}
