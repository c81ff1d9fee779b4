import { randomUUID } from 'node:crypto';
import {
  committedOffsets,
  endOffsets,
  groupHasMembers,
  groupOf,
  remaining,
  slotKey,
  topicsOf,
  viewOf,
  type ClickHouseClient,
  type ConsumedEvent,
  type EventStore,
  type Offsets,
  type OrganizationFingerprint,
  type ProjectionName,
  type RebuildableView,
  type Redis,
  type StoredEvent,
  type ViewFingerprints,
  type ViewPositions,
} from '@sendline/infra';

/** Where a replay says how it went (pino's `info` fits). */
export interface ReplayLogger {
  info(fields: object, message: string): void;
}

export type ReplayableView = ProjectionName;

export interface ReplayOptions {
  /** The event store; the view's topics are its `topics` (pass a store on other topics to replay those). */
  store: EventStore;
  /** Redis, for the Redis views (`suppressions`, `accounts`, `audit`, `allowance`). */
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
  /** Told, while the view is rebuilt, how many events were read of how many, and how long it has taken. */
  onProgress?: (progress: ReplayProgress) => void;
  /** How long to wait for a lagging live projection to reach what the replay read (default 30 s). */
  waitForLiveMs?: number;
  /** After a swap, how long to let the live projection finish the batch in hand before catching up (default 3 s). */
  settleMs?: number;
  /** The clock for the retention applied to both activity copies before they are compared. */
  now?: () => number;
  /** At most this many differences are listed in the report (default 50). */
  maxDifferences?: number;
  logger?: ReplayLogger;
}

/** How far the rebuild has read: events read, of `total` (the topics' size, which grows while they are read). */
export interface ReplayProgress {
  read: number;
  total: number;
  elapsedMs: number;
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
  // The view's copy to rebuild, next to the live view the options name (its registry entry knows how).
  const target: RebuildableView = viewOf(view).rebuild(options, id);
  // A Redis view keeps its position with its data: what it holds is known from it, whatever the group committed.
  const livePositions = viewOf(view).livePositions?.(options);
  const log = options.logger;
  const liveProjection: LiveProjection = {
    store,
    groupId: liveGroup,
    topics,
    positions: livePositions,
    logger: log,
    view,
  };

  await target.prepare();
  let swapped = false;
  try {
    // 1. Build: every event from the beginning of the topics up to their end now.
    const position: Offsets = await endOffsets(store, topics);
    const buildStarted = Date.now();
    const events = await store.readAll(
      topics,
      async (items) => {
        for (const { position: p } of items) {
          const slot = slotKey(p.topic, p.partition);
          const next = BigInt(p.offset) + 1n;
          if (next > (position.get(slot) ?? 0n)) position.set(slot, next);
        }
        await target.apply(items.filter((item): item is ConsumedEvent<StoredEvent> => item.event !== undefined));
      },
      (read, total) => options.onProgress?.({ read, total, elapsedMs: Date.now() - buildStarted }),
    );
    await target.settle();
    const buildMs = Date.now() - buildStarted;
    log?.info({ view, events, buildMs }, 'replay built');

    // 2. Catch up with the live projection, then compare.
    let caughtUp = 0;
    let comparison: ReturnType<typeof compare> | undefined;
    for (let round = 0; round < 3; round++) {
      const live = await waitForLive(liveProjection, position, options.waitForLiveMs ?? 30_000);
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
      const later = await liveOffsets(liveProjection);
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
  const built = `${report.view}: rebuilt ${report.events} events of ${report.topics.join(', ')} in ${(report.buildMs / 1000).toFixed(1)} s (${report.eventsPerSecond} events/s)`;
  const orgs = `${report.organizations.rebuilt} organizations`;
  const said = summaryOutcome(report, options, built, orgs);
  // The audit is a view of its own, from the never-compacted history: say so where an operator might expect it.
  return report.view === 'accounts'
    ? `${said} The audit is not part of it: \`replay audit\` rebuilds it from ${options.store.topics.accountsHistory}.`
    : said;
}

function summaryOutcome(report: ReplayReport, options: ReplayOptions, built: string, orgs: string): string {
  if (report.equal && report.swapped) return `${built}; equal to the live view (${orgs}); swapped in.`;
  if (report.equal) return `${built}; equal to the live view (${orgs}); not swapped (dry run).`;
  const differ = `${report.differenceCount} of ${Math.max(report.organizations.live, report.organizations.rebuilt)} organizations differ`;
  if (report.swapped) return `${built}; ${differ}; swapped in anyway (force).`;
  return (
    `${built}; ${differ}; the live view was left as it was` +
    (options.dryRun ? ' (dry run).' : ' (replay again with force to swap it in).')
  );
}

interface LiveProjection {
  store: EventStore;
  groupId: string;
  topics: string[];
  /** A Redis view's own positions: the events it holds, committed by its group or not yet. */
  positions?: ViewPositions | undefined;
  logger?: ReplayLogger | undefined;
  view: ReplayableView;
}

/**
 * How far the live view has got, per partition: its group's committed offsets, or further where the view's own
 * positions say so (a projector killed after writing a batch and before committing it resumes from the view, and a
 * partition that gets no new event then keeps the group's older offset: the view holds those events all the same).
 * Null when neither says anything (no live projection).
 */
async function liveOffsets(live: LiveProjection): Promise<Offsets | null> {
  const committed = await committedOffsets(live.store, live.groupId, live.topics);
  if (!live.positions) return committed;
  const topics = new Set(live.topics);
  const reached: Offsets = new Map(committed ?? []);
  let any = committed !== null;
  for (const [slot, applied] of await live.positions.all()) {
    if (!topics.has(slot.slice(0, slot.lastIndexOf(':')))) continue;
    any = true;
    if (applied + 1n > (reached.get(slot) ?? 0n)) reached.set(slot, applied + 1n);
  }
  return any ? reached : null;
}

/** Waits (up to `timeoutMs`) until the live view has reached at least `position`; how far it got, or null without one. */
async function waitForLive(live: LiveProjection, position: Offsets, timeoutMs: number): Promise<Offsets | null> {
  // A group without members is a projector that is not running: it will not move, so there is nothing to wait for.
  const deadline = (await groupHasMembers(live.store, live.groupId)) ? Date.now() + timeoutMs : 0;
  for (;;) {
    const reached = await liveOffsets(live);
    if (!reached) return null;
    const behind = [...position].filter(([slot, offset]) => (reached.get(slot) ?? 0n) < offset);
    if (behind.length === 0) return reached;
    if (Date.now() >= deadline) {
      // Compared as it stands: say where the live view was behind, for whoever reads why the views differ.
      if (deadline > 0) {
        live.logger?.info(
          {
            view: live.view,
            behind: behind.map(([slot, offset]) => ({
              slot,
              replayRead: String(offset),
              live: String(reached.get(slot) ?? 0n),
            })),
          },
          'the live view did not reach what the replay read in time',
        );
      }
      return reached;
    }
    await sleep(250);
  }
}

function compare(prints: ViewFingerprints, maxDifferences: number) {
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
