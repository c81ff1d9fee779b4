import {
  ACCOUNT_EVENT_TYPES,
  SUPPRESSION_EVENT_TYPES,
  type AccountEvent,
  type SuppressionEvent,
} from '@sendline/domain';
import {
  isActivityEvent,
  type AccountsView,
  type ClickHouseActivityWriter,
  type ConsumedEvent,
  type StoredEvent,
  type SuppressionView,
  type TopicNames,
} from '@sendline/infra';

/** The views the projector keeps, each from its topic. */
export type ProjectionName = 'accounts' | 'suppressions' | 'activity';
export const PROJECTIONS: readonly ProjectionName[] = ['accounts', 'suppressions', 'activity'];

export function topicsOf(projection: ProjectionName, topics: TopicNames): string[] {
  switch (projection) {
    case 'accounts':
      return [topics.accounts];
    case 'suppressions':
      return [topics.suppressions];
    case 'activity':
      return [topics.messages];
  }
}

/** The consumer group of a projection: `projector-accounts`, `projector-suppressions`, `projector-activity`. */
export function groupOf(projection: ProjectionName, prefix = 'projector'): string {
  return `${prefix}-${projection}`;
}

export type BatchHandler = (items: ConsumedEvent<StoredEvent>[]) => Promise<void>;

const accountTypes = new Set<string>(ACCOUNT_EVENT_TYPES);
const suppressionTypes = new Set<string>(SUPPRESSION_EVENT_TYPES);

/** Applies a batch of the `accounts` topic to the accounts view (events of other types are skipped). */
export function accountsHandler(view: AccountsView): BatchHandler {
  return (items) =>
    view.apply(items.map((item) => item.event).filter((event): event is AccountEvent => accountTypes.has(event.type)));
}

/** Applies a batch of `email.suppressions` to the suppression view. */
export function suppressionsHandler(view: SuppressionView): BatchHandler {
  return (items) =>
    view.apply(
      items.map((item) => item.event).filter((event): event is SuppressionEvent => suppressionTypes.has(event.type)),
    );
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
