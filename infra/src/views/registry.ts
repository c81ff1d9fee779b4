import type { ITopicConfig } from 'kafkajs';
import type { ClickHouseClient } from '../clickhouse/client';
import type { ConsumerPositions } from '../kafka/eventStore/positions';
import { deadLetterTopicConfig, deadLetterTopicOf, topicConfigs, type TopicNames } from '../kafka/topics';
import type { Redis } from '../redis/client';
import { accountsHandler, AccountsView, rebuildAccounts } from './accounts';
import { activityHandler, ClickHouseActivityWriter, rebuildActivity, type ActivityWriterOptions } from './activity';
import { allowanceHandler, AllowanceView, rebuildAllowance } from './allowance';
import type { BatchHandler } from './apply';
import { auditHandler, AuditView, rebuildAudit } from './audit';
import { deadLettersHandler, rebuildDeadLetters } from './deadLetters';
import { inboundHandler, rebuildInbound } from './inbound';
import { positionsKeyOf, ViewPositions } from './positions';
import type { RebuildableView } from './rebuildable';
import { rebuildSuppressions, suppressionsHandler, SuppressionView } from './suppressions';
import { rebuildTemplates, templatesHandler, TemplatesView } from './templates';

/**
 * The views built from the log, one entry each: what the projector runs, what a replay rebuilds, what the admin
 * command line offers. A new view is a folder (infra/src/views/<view>/) and one entry in VIEWS; nothing else lists
 * views. An entry's consumer group is `<prefix>-<name>` (groupOf); its fingerprint per organization is its
 * rebuilt copy's (RebuildableView.fingerprints), compared with the live view by the replay.
 */

/** The stores a view is written to: Redis (with its key namespace) or ClickHouse (with its database). */
export interface ViewStores {
  redis?: Redis | undefined;
  /** Key namespace of the Redis views (default `sl`). */
  namespace?: string | undefined;
  clickhouse?: ClickHouseClient | undefined;
  database?: string | undefined;
}

/** What the projector needs to keep a view: the stores, and the activity writer's settings. */
export interface ProjectionContext extends ViewStores {
  writer?: ActivityWriterOptions | undefined;
}

/** What a replay needs to rebuild a view: the stores, and the clock of the activity's retention. */
export interface RebuildContext extends ViewStores {
  now?: (() => number) | undefined;
}

/** A view as the projector runs it. */
export interface ViewProjection {
  handle: BatchHandler;
  /** A Redis view's position, kept with its data: the consumer resumes from it, not from the group's offsets. */
  positions?: ConsumerPositions;
  /** The activity store's batched writer (flushed and closed when the projector stops). */
  writer?: ClickHouseActivityWriter;
}

export interface ViewEntry {
  /**
   * Where the view lives. A Redis view keeps its position per partition with its data and resumes from it (also
   * when Redis comes back after losing writes); a ClickHouse view is idempotent by its table engine and resumes
   * from its consumer group's committed offsets.
   */
  store: 'redis' | 'clickhouse';
  /** The topics the view is built from. */
  topics(topics: TopicNames): string[];
  /** Topics to create before consuming, when the projector may start before whoever creates them. */
  ensureTopics?(topics: TopicNames): ITopicConfig[];
  /** The live view's batch handler (and position). */
  project(context: ProjectionContext): ViewProjection;
  /** A Redis view's positions as they stand in the live view (what a replay compares against). */
  livePositions?(stores: ViewStores): ViewPositions;
  /** A fresh copy beside the live view, for a replay (`id` names the copy). */
  rebuild(context: RebuildContext, id: string): RebuildableView;
}

const DEFAULT_NAMESPACE = 'sl';

function redisOf(name: string, stores: ViewStores, doing: string): Redis {
  if (!stores.redis) throw new Error(`${doing} ${name} needs options.redis`);
  return stores.redis;
}

function clickhouseOf(name: string, stores: ViewStores, doing: string) {
  const { clickhouse, database } = stores;
  if (!clickhouse || !database) throw new Error(`${doing} ${name} needs options.clickhouse and options.database`);
  return { clickhouse, database };
}

/** A Redis view: its handler writes its position (`<ns>:positions:{<name>}`) with its data. */
function redisView(
  name: string,
  topics: (topics: TopicNames) => string[],
  handler: (redis: Redis, namespace: string, positionsKey: string) => BatchHandler,
  rebuild: (redis: Redis, namespace: string, id: string) => RebuildableView,
): ViewEntry {
  return {
    store: 'redis',
    topics,
    project: (context) => {
      const redis = redisOf(name, context, 'projecting');
      const positionsKey = positionsKeyOf(context.namespace ?? DEFAULT_NAMESPACE, name);
      return {
        handle: handler(redis, context.namespace ?? DEFAULT_NAMESPACE, positionsKey),
        positions: new ViewPositions(redis, positionsKey),
      };
    },
    livePositions: (stores) =>
      new ViewPositions(
        redisOf(name, stores, 'replaying'),
        positionsKeyOf(stores.namespace ?? DEFAULT_NAMESPACE, name),
      ),
    rebuild: (context, id) => rebuild(redisOf(name, context, 'replaying'), context.namespace ?? DEFAULT_NAMESPACE, id),
  };
}

/** The views, in the order the projector starts them and `admin replay` lists them. */
export const VIEWS = {
  suppressions: redisView(
    'suppressions',
    (topics) => [topics.suppressions],
    (redis, namespace, positionsKey) => suppressionsHandler(new SuppressionView(redis, namespace), redis, positionsKey),
    rebuildSuppressions,
  ),
  activity: {
    store: 'clickhouse',
    topics: (topics) => [topics.messages],
    project: (context) => {
      const { clickhouse, database } = clickhouseOf('activity', context, 'projecting');
      const writer = new ClickHouseActivityWriter(clickhouse, database, context.writer);
      return { handle: activityHandler(writer), writer };
    },
    rebuild: (context, id) => {
      const { clickhouse, database } = clickhouseOf('activity', context, 'replaying');
      return rebuildActivity(clickhouse, database, id, context.now);
    },
  },
  accounts: redisView(
    'accounts',
    (topics) => [topics.accounts],
    (redis, namespace, positionsKey) => accountsHandler(new AccountsView(redis, namespace), redis, positionsKey),
    rebuildAccounts,
  ),
  // The audit keeps every account event: it reads the history the archiver copies, never the compacted topic.
  audit: redisView(
    'audit',
    (topics) => [topics.accountsHistory],
    (redis, namespace, positionsKey) => auditHandler(new AuditView(redis, namespace), redis, positionsKey),
    rebuildAudit,
  ),
  allowance: redisView(
    'allowance',
    (topics) => [topics.messages],
    (redis, namespace, positionsKey) => allowanceHandler(new AllowanceView(namespace), redis, positionsKey),
    rebuildAllowance,
  ),
  // Every version of the organizations' templates: their events are on the accounts topic, one key per version.
  templates: redisView(
    'templates',
    (topics) => [topics.accounts],
    (redis, namespace, positionsKey) => templatesHandler(new TemplatesView(redis, namespace), redis, positionsKey),
    rebuildTemplates,
  ),
  // The messages' events a consumer set aside: the organizations' dead letters (ClickHouse, like activity).
  deadLetters: {
    store: 'clickhouse',
    topics: (topics) => [deadLetterTopicOf(topics.messages), deadLetterTopicOf(topics.deliveryRetries)],
    // The dead-letter topics exist once a consumer of their topic started; the projector may start first.
    ensureTopics: (topics) => [topics.messages, topics.deliveryRetries].map(deadLetterTopicConfig),
    project: (context) => {
      const { clickhouse, database } = clickhouseOf('deadLetters', context, 'projecting');
      return { handle: deadLettersHandler(clickhouse, database) };
    },
    rebuild: (context, id) => {
      const { clickhouse, database } = clickhouseOf('deadLetters', context, 'replaying');
      return rebuildDeadLetters(clickhouse, database, id);
    },
  },
  // The organizations' inbound messages (ClickHouse, like activity), from email.inbound.
  inbound: {
    store: 'clickhouse',
    topics: (topics) => [topics.inbound],
    // The inbound reader creates email.inbound; the projector may start first.
    ensureTopics: (topics) => topicConfigs(topics).filter((config) => config.topic === topics.inbound),
    project: (context) => {
      const { clickhouse, database } = clickhouseOf('inbound', context, 'projecting');
      return { handle: inboundHandler(clickhouse, database) };
    },
    rebuild: (context, id) => {
      const { clickhouse, database } = clickhouseOf('inbound', context, 'replaying');
      return rebuildInbound(clickhouse, database, id);
    },
  },
} as const satisfies Record<string, ViewEntry>;

/** A view's name: an entry of VIEWS. */
export type ProjectionName = keyof typeof VIEWS;

/** Every view's name, in the registry's order. */
export const PROJECTIONS = Object.keys(VIEWS) as readonly ProjectionName[];

/** The entry of a view. */
export function viewOf(projection: ProjectionName): ViewEntry {
  return VIEWS[projection];
}

/** The topics a view is built from. */
export function topicsOf(projection: ProjectionName, topics: TopicNames): string[] {
  return viewOf(projection).topics(topics);
}

/**
 * The consumer group of a projection: `projector-suppressions`, `projector-activity`, `projector-accounts`,
 * `projector-audit`, `projector-allowance`, `projector-templates`, `projector-deadLetters`, `projector-inbound`.
 */
export function groupOf(projection: ProjectionName, prefix = 'projector'): string {
  return `${prefix}-${projection}`;
}

/** The archiver's consumer group (`projector-accounts-archiver`): it copies `accounts` to `accounts.history`. */
export function archiverGroupOf(prefix = 'projector'): string {
  return `${prefix}-accounts-archiver`;
}
