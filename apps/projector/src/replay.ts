import { randomUUID } from 'node:crypto';
import cliProgress from 'cli-progress';
import type { Logger } from 'pino';
import {
  AccountsView,
  AllowanceView,
  activityFingerprints,
  positionsKeyOf,
  ClickHouseActivityWriter,
  dropExpiredPartitions,
  migrate,
  sqlIdentifier,
  sqlString,
  SuppressionView,
  type ClickHouseClient,
  type ConsumedEvent,
  type EventStore,
  type OrganizationFingerprint,
  type Redis,
  type StoredEvent,
} from '@sendline/infra';
import { accountFingerprints, allowanceFingerprints, suppressionFingerprints } from './fingerprints';
import { committedOffsets, endOffsets, groupHasMembers, remaining, slotOf, type Offsets } from './offsets';
import {
  accountsHandler,
  activityHandler,
  allowanceHandler,
  groupOf,
  suppressionsHandler,
  topicsOf,
  type BatchHandler,
  type ProjectionName,
} from './projections';

export type ReplayableView = ProjectionName;

export interface ReplayOptions {
  /** The event store; the view's topics are its `topics` (pass a store on other topics to replay those). */
  store: EventStore;
  /** Redis, for `suppressions` and `accounts`. */
  redis?: Redis;
  /** The live views' Redis namespace (default `sl`). */
  namespace?: string;
  /** ClickHouse and the live activity database, for `activity`. */
  clickhouse?: ClickHouseClient;
  database?: string;
  /** The live projection's consumer group (default `projector-<view>`): the replay catches up to it before comparing. */
  liveGroupId?: string;
  /** Swap the rebuilt view in even when it differs from the live one (after reading the differences). */
  force?: boolean;
  /** Build and compare only; never swap. */
  dryRun?: boolean;
  /** Keep the rebuilt copy when it is not swapped in (default: remove it). */
  keepRebuilt?: boolean;
  /** Activity: keep the replaced tables (in the replay's database) after a swap (default: drop them). */
  keepPrevious?: boolean;
  /** A progress bar with events/s and time left, on this stream (default stderr); false for none. */
  progress?: boolean | NodeJS.WritableStream;
  /** How long to wait for a lagging live projection to reach what the replay read (default 30 s). */
  waitForLiveMs?: number;
  /** After a swap, how long to let the live projection finish the batch in hand before catching up (default 3 s). */
  settleMs?: number;
  /** The clock for the retention applied to both activity copies before they are compared. */
  now?: () => number;
  /** At most this many differences are listed in the report (default 50). */
  maxDifferences?: number;
  logger?: Logger;
}

export interface OrganizationDifference {
  organizationId: string;
  live: Omit<OrganizationFingerprint, 'organizationId'> | null;
  rebuilt: Omit<OrganizationFingerprint, 'organizationId'> | null;
}

export interface ReplayReport {
  view: ReplayableView;
  topics: string[];
  /** The live view (Redis namespace or ClickHouse database) and the copy the replay built. */
  live: string;
  rebuilt: string;
  /** Events read from the beginning of the topics. */
  events: number;
  /** Events read afterwards to reach the live projection before comparing. */
  caughtUp: number;
  /** Events applied to the swapped-in view that the live projection had written to the old one meanwhile. */
  afterSwap: number;
  buildMs: number;
  eventsPerSecond: number;
  durationMs: number;
  organizations: { live: number; rebuilt: number };
  equal: boolean;
  differenceCount: number;
  differences: OrganizationDifference[];
  swapped: boolean;
  /** Where the replaced view was kept (activity with keepPrevious), or where the unswapped copy was kept. */
  kept?: string;
  summary: string;
}

/** What a replay does with one kind of view. */
interface Target {
  live: string;
  rebuilt: string;
  prepare(): Promise<void>;
  apply: BatchHandler;
  settle(): Promise<void>;
  fingerprints(): Promise<{
    live: Map<string, OrganizationFingerprint>;
    rebuilt: Map<string, OrganizationFingerprint>;
  }>;
  swap(): Promise<void>;
  applyToLive: BatchHandler;
  settleLive(): Promise<void>;
  discard(): Promise<void>;
  /** After a swap: drop (or keep) the replaced view; answers where it was kept. */
  retire(keep: boolean): Promise<string | undefined>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Rebuilds a view from its topics into a fresh copy, compares it with the live
 * view (count and checksum per organization), and swaps it in only when they
 * agree (or with `force`); otherwise reports the differences and leaves the live
 * view as it is. Never exits the process; throws only when the replay itself fails
 * (the live view is then untouched).
 *
 * The live projection keeps running meanwhile. Before comparing, the copy catches
 * up to the offsets the live consumer group committed; after a swap, the events the
 * live projection wrote into the old view in the meantime are applied to the new
 * one (views are idempotent, so applying them twice is harmless).
 */
export async function replayView(view: ReplayableView, options: ReplayOptions): Promise<ReplayReport> {
  const started = Date.now();
  const { store } = options;
  const topics = topicsOf(view, store.topics);
  const liveGroup = options.liveGroupId ?? groupOf(view);
  const id = randomUUID().replace(/-/g, '').slice(0, 12);
  const target = view === 'activity' ? activityTarget(options, id) : redisTarget(view, options, id);
  const log = options.logger;

  await target.prepare();
  let swapped = false;
  try {
    // 1. Build: every event from the beginning of the topics up to their end now.
    const position: Offsets = await endOffsets(store, topics);
    const bar = progressBar(view, options.progress);
    const buildStarted = Date.now();
    const events = await store.readAll(
      topics,
      async (items) => {
        for (const { position: p } of items) {
          const slot = slotOf(p.topic, p.partition);
          const next = BigInt(p.offset) + 1n;
          if (next > (position.get(slot) ?? 0n)) position.set(slot, next);
        }
        await target.apply(items.filter((item): item is ConsumedEvent<StoredEvent> => item.event !== undefined));
      },
      (read, total) => bar?.update(read, total, Date.now() - buildStarted),
    );
    await target.settle();
    bar?.stop();
    const buildMs = Date.now() - buildStarted;
    log?.info({ view, events, buildMs }, 'replay built');

    // 2. Catch up with the live projection, then compare.
    let caughtUp = 0;
    let comparison: ReturnType<typeof compare> | undefined;
    for (let round = 0; round < 3; round++) {
      const live = await waitForLive(store, liveGroup, topics, position, options.waitForLiveMs ?? 30_000);
      if (live) {
        const ranges = remaining(position, live);
        if (ranges.size > 0) {
          caughtUp += await store.readRange(ranges, target.apply);
          await target.settle();
          for (const [slot, range] of ranges) position.set(slot, range.to);
        }
      }
      comparison = compare(await target.fingerprints(), options.maxDifferences ?? 50);
      if (comparison.equal || !live) break;
      // Differences may be events the live projection wrote but had not committed yet: look again if it moved.
      const later = await committedOffsets(store, liveGroup, topics);
      if (!later || remaining(live, later).size === 0) break;
    }
    if (!comparison) throw new Error('unreachable: no comparison');

    // 3. Swap, or leave the live view alone.
    let afterSwap = 0;
    let kept: string | undefined;
    if (!options.dryRun && (comparison.equal || options.force)) {
      await target.swap();
      swapped = true;
      log?.info({ view, live: target.live }, 'rebuilt view swapped in');
      // What the live projection wrote to the old view after the comparison must reach the new one.
      await sleep(options.settleMs ?? 3000);
      const live = await committedOffsets(store, liveGroup, topics);
      if (live) {
        afterSwap = await store.readRange(remaining(position, live), target.applyToLive);
        await target.settleLive();
      }
      kept = await target.retire(options.keepPrevious ?? false);
    } else if (options.keepRebuilt) {
      kept = target.rebuilt;
    } else {
      await target.discard();
    }

    const report: ReplayReport = {
      view,
      topics,
      live: target.live,
      rebuilt: target.rebuilt,
      events,
      caughtUp,
      afterSwap,
      buildMs,
      eventsPerSecond: buildMs > 0 ? Math.round((events / buildMs) * 1000) : events,
      durationMs: Date.now() - started,
      organizations: comparison.organizations,
      equal: comparison.equal,
      differenceCount: comparison.differenceCount,
      differences: comparison.differences,
      swapped,
      ...(kept ? { kept } : {}),
      summary: '',
    };
    report.summary = summarize(report, options);
    return report;
  } catch (error) {
    if (!swapped) await target.discard().catch(() => undefined);
    throw error;
  }
}

function summarize(report: ReplayReport, options: ReplayOptions): string {
  const built = `${report.view}: rebuilt ${report.events} events in ${(report.buildMs / 1000).toFixed(1)} s (${report.eventsPerSecond} events/s)`;
  const orgs = `${report.organizations.rebuilt} organizations`;
  if (report.equal && report.swapped) return `${built}; equal to the live view (${orgs}); swapped in.`;
  if (report.equal) return `${built}; equal to the live view (${orgs}); not swapped (dry run).`;
  const differ = `${report.differenceCount} of ${Math.max(report.organizations.live, report.organizations.rebuilt)} organizations differ`;
  if (report.swapped) return `${built}; ${differ}; swapped in anyway (force).`;
  return (
    `${built}; ${differ}; the live view was left as it was` +
    (options.dryRun ? ' (dry run).' : ' (replay again with force to swap it in).')
  );
}

/** Waits (up to `timeoutMs`) until the live group has committed at least `position`; its offsets, or null without a live group. */
async function waitForLive(
  store: EventStore,
  groupId: string,
  topics: string[],
  position: Offsets,
  timeoutMs: number,
): Promise<Offsets | null> {
  // A group without members is a projector that is not running: it will not move, so there is nothing to wait for.
  const deadline = (await groupHasMembers(store, groupId)) ? Date.now() + timeoutMs : 0;
  for (;;) {
    const live = await committedOffsets(store, groupId, topics);
    if (!live) return null;
    const behind = [...position].some(([slot, offset]) => (live.get(slot) ?? 0n) < offset);
    if (!behind || Date.now() >= deadline) return live;
    await sleep(250);
  }
}

function compare(
  prints: { live: Map<string, OrganizationFingerprint>; rebuilt: Map<string, OrganizationFingerprint> },
  maxDifferences: number,
) {
  const organizations = new Set([...prints.live.keys(), ...prints.rebuilt.keys()]);
  const differences: OrganizationDifference[] = [];
  let differenceCount = 0;
  const strip = (print: OrganizationFingerprint | undefined) =>
    print ? { count: print.count, checksum: print.checksum, counts: print.counts } : null;
  for (const organizationId of [...organizations].sort()) {
    const live = prints.live.get(organizationId);
    const rebuilt = prints.rebuilt.get(organizationId);
    if (live?.count === rebuilt?.count && live?.checksum === rebuilt?.checksum) continue;
    differenceCount++;
    if (differences.length < maxDifferences) {
      differences.push({ organizationId, live: strip(live), rebuilt: strip(rebuilt) });
    }
  }
  return {
    equal: differenceCount === 0,
    differenceCount,
    differences,
    organizations: { live: prints.live.size, rebuilt: prints.rebuilt.size },
  };
}

function progressBar(view: string, option: ReplayOptions['progress']) {
  if (option === false) return undefined;
  const stream = option === true || option === undefined ? process.stderr : option;
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `replay ${view} [{bar}] {percentage}% | {value}/{total} events | {speed} events/s | ETA {eta_formatted}`,
      etaBuffer: 100,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(read: number, total: number, elapsedMs: number) {
      const speed = elapsedMs > 0 ? Math.round((read / elapsedMs) * 1000) : 0;
      if (!started) {
        bar.start(total, read, { speed });
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(read, { speed });
      }
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

// ── Redis views: a fresh namespace, swapped in with RENAME ─────────────────────

async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  return [...new Set(keys)];
}

function redisTarget(view: 'suppressions' | 'accounts' | 'allowance', options: ReplayOptions, id: string): Target {
  const redis = options.redis;
  if (!redis) throw new Error(`replaying ${view} needs options.redis`);
  const live = options.namespace ?? 'sl';
  const rebuilt = `${live}.replay.${id}`;
  if (/[*?[\]\s]/.test(live)) throw new Error(`namespace ${JSON.stringify(live)} holds glob characters`);
  // The view's keys, its positions included: a rebuilt view carries the positions it was built up to. The
  // allowance's holds (`<ns>:holds:*`) are the API's, not the view's, and are left alone.
  const viewPatterns = {
    suppressions: (ns: string) => [`${ns}:suppressions:*`],
    accounts: (ns: string) => [`${ns}:apikey:*`, `${ns}:org:*`, `${ns}:organizations`],
    allowance: (ns: string) => [`${ns}:allowance:*`],
  }[view];
  const patterns = (ns: string) => [...viewPatterns(ns), positionsKeyOf(ns, view)];
  const keysOf = async (ns: string) => (await Promise.all(patterns(ns).map((p) => scanKeys(redis, p)))).flat();
  const handlerFor = (ns: string) => {
    const positions = positionsKeyOf(ns, view);
    if (view === 'suppressions') return suppressionsHandler(new SuppressionView(redis, ns), redis, positions);
    if (view === 'accounts') return accountsHandler(new AccountsView(redis, ns), redis, positions);
    return allowanceHandler(new AllowanceView(ns), redis, positions);
  };

  /** Organizations a namespace holds anything for, from its keys and its organization set. */
  const organizationsOf = async (ns: string): Promise<string[]> => {
    const ids = new Set<string>();
    if (view === 'suppressions') {
      const setKey = new SuppressionView(redis, ns).organizationsKey;
      for (const key of await scanKeys(redis, `${ns}:suppressions:*`)) {
        if (key !== setKey) ids.add(key.slice(`${ns}:suppressions:`.length));
      }
      for (const org of await new SuppressionView(redis, ns).organizations()) ids.add(org);
    } else if (view === 'allowance') {
      for (const key of await scanKeys(redis, `${ns}:allowance:*:logged`)) {
        ids.add(key.slice(`${ns}:allowance:`.length).split(':')[0]!);
      }
    } else {
      for (const key of await scanKeys(redis, `${ns}:org:*`)) ids.add(key.slice(`${ns}:org:`.length).split(':')[0]!);
      for (const org of await new AccountsView(redis, ns).organizations()) ids.add(org);
    }
    return [...ids];
  };
  const fingerprintsOf = async (ns: string, organizations: string[]) =>
    view === 'suppressions'
      ? suppressionFingerprints(new SuppressionView(redis, ns), organizations)
      : view === 'allowance'
        ? allowanceFingerprints(redis, ns, organizations)
        : accountFingerprints(new AccountsView(redis, ns), organizations);
  const removeKeys = async (keys: string[]) => {
    for (let i = 0; i < keys.length; i += 500) await redis.unlink(...keys.slice(i, i + 500));
  };

  return {
    live,
    rebuilt,
    prepare: async () => {
      const leftovers = await keysOf(rebuilt);
      if (leftovers.length > 0) await removeKeys(leftovers);
    },
    apply: handlerFor(rebuilt),
    settle: async () => undefined,
    fingerprints: async () => {
      const organizations = [...new Set([...(await organizationsOf(live)), ...(await organizationsOf(rebuilt))])];
      const [a, b] = await Promise.all([fingerprintsOf(live, organizations), fingerprintsOf(rebuilt, organizations)]);
      return { live: a, rebuilt: b };
    },
    swap: async () => {
      // One MULTI: readers see the old view or the new one, never a mix.
      const fresh = await keysOf(rebuilt);
      const renamed = new Set(fresh.map((key) => live + key.slice(rebuilt.length)));
      const stale = (await keysOf(live)).filter((key) => !renamed.has(key));
      const multi = redis.multi();
      for (const key of fresh) multi.rename(key, live + key.slice(rebuilt.length));
      for (const key of stale) multi.del(key);
      const results = await multi.exec();
      const failed = results?.find(([error]) => error);
      if (failed?.[0]) throw failed[0];
    },
    applyToLive: handlerFor(live),
    settleLive: async () => undefined,
    discard: async () => removeKeys(await keysOf(rebuilt)),
    retire: async () => undefined,
  };
}

// ── Activity: a fresh ClickHouse database, swapped in with RENAME TABLE ────────

function activityTarget(options: ReplayOptions, id: string): Target {
  const client = options.clickhouse;
  const database = options.database;
  if (!client || !database) throw new Error('replaying activity needs options.clickhouse and options.database');
  const live = sqlIdentifier(database);
  const rebuilt = sqlIdentifier(`${database}_replay_${id}`);
  const now = options.now ?? Date.now;
  const batch = 50_000;

  /** A writer and its unawaited writes: the replay reads on while a batch is being inserted. */
  const pipeline = (db: string, fresh: boolean) => {
    const writer = new ClickHouseActivityWriter(client, db, {
      maxEvents: batch,
      maxDelayMs: Infinity,
      freshDatabase: fresh,
    });
    const handle = activityHandler(writer);
    let pending: Promise<void>[] = [];
    let failure: unknown;
    return {
      apply: async (items: ConsumedEvent<StoredEvent>[]) => {
        if (failure) throw failure;
        const written = handle(items);
        written.catch((error: unknown) => (failure ??= error));
        pending.push(written);
        await writer.waitForRoom(batch);
      },
      settle: async () => {
        await writer.flush();
        const waiting = pending;
        pending = [];
        await Promise.all(waiting);
      },
    };
  };
  let building: ReturnType<typeof pipeline> | undefined;
  let catchingUp: ReturnType<typeof pipeline> | undefined;

  return {
    live,
    rebuilt,
    prepare: async () => {
      await migrate(client, rebuilt);
      building = pipeline(rebuilt, true);
    },
    apply: (items) => building!.apply(items),
    settle: () => building!.settle(),
    fingerprints: async () => {
      // Both copies as the retention sweep leaves them: the topic keeps 3 days more than the store.
      await dropExpiredPartitions(client, rebuilt, now());
      await dropExpiredPartitions(client, live, now());
      const [a, b] = await Promise.all([activityFingerprints(client, live), activityFingerprints(client, rebuilt)]);
      return { live: a, rebuilt: b };
    },
    swap: async () => {
      await client.command({
        query:
          `RENAME TABLE ${live}.messages TO ${rebuilt}.messages_previous, ${rebuilt}.messages TO ${live}.messages, ` +
          `${live}.message_events TO ${rebuilt}.message_events_previous, ` +
          `${rebuilt}.message_events TO ${live}.message_events`,
      });
      // Tells running projectors to drop the message rows they hold in memory.
      await client.command({
        query: `INSERT INTO ${live}.activity_swaps (swapped_at, replay_id) VALUES (now(), ${sqlString(id)})`,
      });
    },
    applyToLive: (items) => (catchingUp ??= pipeline(live, false)).apply(items),
    settleLive: async () => catchingUp?.settle(),
    discard: async () => {
      await client.command({ query: `DROP DATABASE IF EXISTS ${rebuilt}` });
    },
    retire: async (keep) => {
      if (keep) return `${rebuilt}.messages_previous, ${rebuilt}.message_events_previous`;
      await client.command({ query: `DROP DATABASE IF EXISTS ${rebuilt}` });
      return undefined;
    },
  };
}
