import {
  archiverGroupOf,
  consumerLag,
  groupOf,
  PROJECTIONS,
  topicsOf,
  viewOf,
  type ActivityWriterOptions,
  type ClickHouseActivityWriter,
  type ClickHouseClient,
  type EventStore,
  type PartitionLag,
  type ProjectionName,
  type Redis,
  type RunningConsumer,
} from '@sendline/infra';
import { pino, type Logger } from 'pino';
import { ARCHIVER, startAccountsArchiver } from './archiver';
import { ProjectorMetrics } from './metrics';
import { RetentionSweep } from './retention';

export interface ProjectorOptions {
  store: EventStore;
  redis: Redis;
  clickhouse: ClickHouseClient;
  /** The activity store's database. */
  database: string;
  /** Key namespace of the Redis views (default `sl`). */
  namespace?: string;
  /** Consumer groups are `<groupPrefix>-<projection>` (default `projector`). */
  groupPrefix?: string;
  /** Which projections to run (default all). */
  projections?: readonly ProjectionName[];
  /**
   * Whether to run the accounts archiver, which copies `accounts` to `accounts.history` (where the audit is
   * projected from) under `<groupPrefix>-accounts-archiver`. Default: when the audit projection runs.
   */
  archive?: boolean;
  logger?: Logger;
  metrics?: ProjectorMetrics;
  /** The clock of the retention sweep. */
  now?: () => number;
  /** The retention sweep's schedule, or false for none (default: hourly, 30 days). */
  retention?: { intervalMs?: number; days?: number } | false;
  /** How often the lag gauge is refreshed (default 10 s). */
  lagIntervalMs?: number;
  writer?: ActivityWriterOptions;
  /** Partitions of one topic handled at once (default 6: their events join the same ClickHouse batch). */
  partitionsConsumedConcurrently?: number;
  sessionTimeoutMs?: number;
  /**
   * Attempts per event, once its batch failed, before it goes to the dead-letter topic (default 20:
   * about six minutes of backoff, so a store that is briefly away loses nothing).
   */
  maxAttempts?: number;
}

export interface RunningProjector {
  /** The consumer group of each projection that runs. */
  groups: Partial<Record<ProjectionName, string>>;
  /** The archiver's consumer group, when it runs. */
  archiverGroup: string | undefined;
  metrics: ProjectorMetrics;
  writer: ClickHouseActivityWriter | undefined;
  sweep: RetentionSweep | undefined;
  /** Measures every projection's lag per partition and sets the gauge. */
  refreshLag(): Promise<(PartitionLag & { projection: ProjectionName | typeof ARCHIVER })[]>;
  /** Stops consuming (the batch in hand finishes and is committed), flushes, stops the sweep. */
  stop(): Promise<void>;
}

/**
 * The projector: one consumer group per view, each applying its topic's batches
 * at least once, plus the retention sweep and the lag gauge. The Redis views
 * (accounts, suppressions, allowance) keep their position per partition with their
 * data, written in the same Lua script, and resume from it; the activity store
 * resumes from the group's committed offsets (written after the rows). A batch
 * applied again after a crash or a rebalance changes nothing.
 */
export async function startProjector(options: ProjectorOptions): Promise<RunningProjector> {
  const logger = options.logger ?? pino({ level: 'silent' });
  const metrics = options.metrics ?? new ProjectorMetrics();
  const projections = options.projections ?? PROJECTIONS;
  const groups: Partial<Record<ProjectionName, string>> = {};
  const consumers: RunningConsumer[] = [];
  let archiver: RunningConsumer | undefined;
  const archiverGroup =
    (options.archive ?? projections.includes('audit')) ? archiverGroupOf(options.groupPrefix) : undefined;
  let writer: ClickHouseActivityWriter | undefined;
  let sweep: RetentionSweep | undefined;
  const timers: { lag?: NodeJS.Timeout } = {};

  const namespace = options.namespace ?? 'sl';
  // The activity writer's flushes are measured and logged here; what a view needs is in its registry entry.
  const writerOptions: ActivityWriterOptions = {
    ...options.writer,
    onFlush: (stats) => {
      metrics.flushSeconds.observe(stats.durationMs / 1000);
      logger.debug({ flush: stats }, 'activity rows written');
      if (stats.orphans > 0) {
        metrics.orphans.inc(stats.orphans);
        logger.warn({ orphans: stats.orphans }, 'outcome events of unknown messages skipped');
      }
      options.writer?.onFlush?.(stats);
    },
  };

  const refreshLag = async () => {
    const admin = options.store.kafka.admin();
    await admin.connect();
    try {
      const all: (PartitionLag & { projection: ProjectionName | typeof ARCHIVER })[] = [];
      for (const projection of projections) {
        const lags = await consumerLag(admin, groups[projection]!, topicsOf(projection, options.store.topics));
        all.push(...lags.map((lag) => ({ ...lag, projection })));
      }
      if (archiverGroup) {
        // Must stay far below a day: older events of `accounts` may be compacted away before they are copied.
        const lags = await consumerLag(admin, archiverGroup, [options.store.topics.accounts]);
        all.push(...lags.map((lag) => ({ ...lag, projection: ARCHIVER })));
      }
      metrics.lag.reset();
      for (const lag of all) {
        metrics.lag.set({ projection: lag.projection, topic: lag.topic, partition: String(lag.partition) }, lag.lag);
      }
      return all;
    } finally {
      await admin.disconnect();
    }
  };

  // Redis back after a restart may have lost its last writes, positions included: every Redis view goes back to
  // where its data says it is (a view that lost nothing re-reads nothing: it seeks to where it was).
  let redisLost = false;
  const onRedisError = () => {
    redisLost = true;
  };
  const onRedisReady = () => {
    if (!redisLost) return;
    redisLost = false;
    logger.info('Redis is back; the Redis views resume from their own positions');
    for (const [i, projection] of projections.entries()) {
      const consumer = consumers[i];
      if (!consumer || viewOf(projection).store !== 'redis') continue;
      void (async () => {
        // Redis may drop again while it settles: a few tries (a batch's guard still catches a view behind).
        for (let attempt = 1; attempt <= 5; attempt++) {
          try {
            await consumer.resync();
            return;
          } catch (error) {
            logger.warn({ err: error, projection, attempt }, 'resuming from the view failed');
            await new Promise((resolve) => setTimeout(resolve, 1000));
          }
        }
      })();
    }
  };
  options.redis.on('error', onRedisError);
  options.redis.on('end', onRedisError);
  options.redis.on('close', onRedisError);
  options.redis.on('ready', onRedisReady);

  const stop = async () => {
    options.redis.off('error', onRedisError);
    options.redis.off('end', onRedisError);
    options.redis.off('close', onRedisError);
    options.redis.off('ready', onRedisReady);
    clearInterval(timers.lag);
    // Write what is buffered now, so the batches in hand finish quickly and get committed.
    const flushing = writer?.flush().catch(() => undefined);
    await Promise.all([...consumers, ...(archiver ? [archiver] : [])].map((consumer) => consumer.stop()));
    await flushing;
    await writer?.close().catch((error: unknown) => logger.error({ err: error }, 'final activity flush failed'));
    await sweep?.stop();
    logger.info('projector stopped');
  };

  try {
    for (const projection of projections) {
      const view = viewOf(projection);
      const ensure = view.ensureTopics?.(options.store.topics);
      if (ensure) await options.store.ensureTopics(ensure);
      const groupId = groupOf(projection, options.groupPrefix);
      groups[projection] = groupId;
      const projected = view.project({
        redis: options.redis,
        namespace,
        clickhouse: options.clickhouse,
        database: options.database,
        writer: writerOptions,
      });
      if (projected.writer) writer = projected.writer;
      const handle = projected.handle;
      consumers.push(
        await options.store.consume({
          groupId,
          topics: topicsOf(projection, options.store.topics),
          partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 6,
          maxAttempts: options.maxAttempts ?? 20,
          maxRetryDelayMs: 30_000,
          // A view's writes are idempotent: an unknown failure is tried again before the event is dead-lettered.
          retryUnknownErrors: true,
          ...(options.sessionTimeoutMs ? { sessionTimeoutMs: options.sessionTimeoutMs } : {}),
          handleBatch: async (items, range) => {
            await handle(items, range);
            metrics.events.inc({ projection }, items.length);
          },
          // A Redis view resumes from its own position, not from the group's committed offset (the activity
          // store in ClickHouse is idempotent by its table engine and keeps the group's offsets).
          ...(projected.positions ? { positions: projected.positions } : {}),
          // The activity writer keeps the rows of messages in progress in memory; after a rebalance the partitions
          // it holds may have been another copy's, whose writes those rows do not show: read back from ClickHouse.
          ...(projected.writer ? { onAssigned: () => projected.writer!.forgetRows() } : {}),
          onError: (error, item) => {
            metrics.failures.inc({ projection });
            logger.warn(
              { err: error, projection, position: item?.position, eventType: item?.event.type },
              item ? 'event failed; retrying' : 'batch failed; applying its events one by one',
            );
          },
        }),
      );
      logger.info({ projection, groupId }, 'projection started');
    }
    if (archiverGroup) {
      archiver = await startAccountsArchiver({
        store: options.store,
        groupId: archiverGroup,
        logger,
        metrics,
        ...(options.sessionTimeoutMs ? { sessionTimeoutMs: options.sessionTimeoutMs } : {}),
      });
      logger.info({ groupId: archiverGroup }, 'accounts archiver started');
    }
    if (options.retention !== false && projections.includes('activity')) {
      sweep = new RetentionSweep({
        client: options.clickhouse,
        database: options.database,
        logger,
        ...(options.now ? { now: options.now } : {}),
        ...(options.retention?.intervalMs ? { intervalMs: options.retention.intervalMs } : {}),
        ...(options.retention?.days ? { retentionDays: options.retention.days } : {}),
        onSweep: (dropped) => dropped.forEach((d) => metrics.droppedPartitions.inc({ table: d.table })),
      });
      await sweep.start();
    }
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }

  timers.lag = setInterval(
    () => void refreshLag().catch((error: unknown) => logger.warn({ err: error }, 'measuring lag failed')),
    options.lagIntervalMs ?? 10_000,
  );
  timers.lag.unref();

  return { groups, archiverGroup, metrics, writer, sweep, refreshLag, stop };
}
