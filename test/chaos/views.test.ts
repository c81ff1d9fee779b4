import { randomUUID } from 'node:crypto';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowancePeriod, type MessageAccepted } from '@sendline/domain';
import { replayView } from '@sendline/application';
import { startProjector, type RunningProjector } from '@sendline/projector';
import {
  AllowanceCounter,
  AllowanceView,
  createClickHouse,
  createRedis,
  EventStore,
  positionsKeyOf,
  prefixedTopicNames,
  SuppressionView,
  ViewPositions,
  topicConfigs,
  type ClickHouseClient,
  type Redis,
  type StoredEvent,
  groupOf,
} from '@sendline/infra';
import { startPrivateStack, type PrivateStack } from '../support/privateStack';
import { deleteTopicsAndDisconnect } from '../support/services';
import { accepted, accountEvents, suppressionAdded, suppressionDeleted } from '../projector/support';
import { sleep, waitUntil } from './harness';

/**
 * Views that survive their store's crash (issue 11, item 6) and an allowance equal to the log (item 2).
 *
 * A private Redis, started by the project's infra script with the project's redis.conf (appendonly yes,
 * appendfsync everysec) on its own port and data directory, holds the views of a projector that runs on topics
 * and consumer groups of this test's own. Suppression, account and MessageAccepted events (keyed retries and
 * redelivered events among them) stream in while Redis is
 *   1. killed with SIGKILL and started again on its append-only file, and
 *   2. killed and started again on a copy of its append-only file taken seconds earlier: what a machine crash
 *      with `everysec` (or a restore) looks like, the views having lost their last writes while the consumer
 *      groups had committed past them.
 * Afterwards every view equals a replay of its topics, the suppressions equal what the events say, and the
 * allowance equals the log's distinct accepted messages' active recipients.
 */

let stack: PrivateStack;
let store: EventStore;
let redis: Redis;
let clickhouse: ClickHouseClient;
let projector: RunningProjector | undefined;
const run = randomUUID().slice(0, 8);
const groupPrefix = `chaos-views-${run}`;

beforeAll(async () => {
  stack = await startPrivateStack({ name: 'chaos-views', services: ['redis'] });
  store = new EventStore({
    brokers: stack.addresses.kafkaBrokers,
    registryUrl: stack.addresses.schemaRegistryUrl,
    clientId: 'chaos-views',
    topics: prefixedTopicNames(`chaos-views-${run}`),
  });
  await store.ensureTopics(topicConfigs(store.topics));
  redis = createRedis(stack.addresses.redisUrl);
  clickhouse = createClickHouse(stack.addresses.clickhouseUrl);
  projector = await startProjector({
    store,
    redis,
    clickhouse,
    database: stack.addresses.clickhouseDatabase,
    groupPrefix,
    projections: ['suppressions', 'accounts', 'allowance'],
    retention: false,
    sessionTimeoutMs: 10_000,
  });
});

afterAll(async () => {
  await projector?.stop();
  redis?.disconnect();
  await clickhouse?.close();
  if (store) {
    await deleteTopicsAndDisconnect(store);
  }
  await stack?.stop();
});

/** What the events appended say: each organization's suppressed addresses, and its accepted messages. */
class Expected {
  readonly organizations: string[] = [];
  readonly suppressed = new Map<string, Set<string>>();
  readonly messages = new Map<string, Map<string, number>>();
  appended = 0;

  record(events: StoredEvent[]): void {
    this.appended += events.length;
    for (const event of events) {
      const org = event.metadata.organizationId;
      if (event.type === 'SuppressionAdded' || event.type === 'SuppressionDeleted') {
        const set = this.suppressed.get(org) ?? new Set<string>();
        const address = (event.data as { emailAddress: string }).emailAddress.toLowerCase();
        if (event.type === 'SuppressionAdded') set.add(address);
        else set.delete(address);
        this.suppressed.set(org, set);
      } else if (event.type === 'MessageAccepted') {
        const data = (event as MessageAccepted).data;
        const messages = this.messages.get(org) ?? new Map<string, number>();
        messages.set(data.messageId, data.activeRecipients.length);
        this.messages.set(org, messages);
      }
    }
  }

  usage(org: string): number {
    return [...(this.messages.get(org)?.values() ?? [])].reduce((sum, n) => sum + n, 0);
  }
}

/** Streams events for a few organizations until `until` resolves: ~150 events/s in small appends. */
async function stream(expected: Expected, until: Promise<unknown>): Promise<void> {
  let done = false;
  void until.finally(() => (done = true));
  const orgs = Array.from({ length: 4 }, () => randomUUID());
  const first = orgs.flatMap((org) => accountEvents(org));
  await store.append(first);
  expected.organizations.push(...orgs);
  expected.record(first);
  const recent: MessageAccepted[] = [];
  for (let tick = 0; !done; tick++) {
    const batch: StoredEvent[] = [];
    for (const [i, org] of orgs.entries()) {
      const address = `r${(tick * 7 + i) % 40}@example.net`;
      // Suppressions come and go: a lost write shows as a wrong entry.
      batch.push(tick % 3 === 2 ? suppressionDeleted(org, address) : suppressionAdded(org, address, Date.now() + tick));
      const to = Array.from({ length: 1 + ((tick + i) % 3) }, (_, k) => `to${tick}-${k}@example.net`);
      batch.push(accepted(org, { to }));
    }
    // A keyed retry (same MessageID, its own event) and a redelivered event (the very same one) now and then.
    const earlier = recent[tick % Math.max(1, recent.length)];
    if (earlier && tick % 4 === 0) batch.push({ ...earlier, metadata: { ...earlier.metadata, eventId: randomUUID() } });
    if (earlier && tick % 5 === 0) batch.push(earlier);
    for (const event of batch) if (event.type === 'MessageAccepted') recent.push(event as MessageAccepted);
    if (recent.length > 50) recent.splice(0, recent.length - 50);
    // The log is the truth: an append that did not answer may still have landed, so retry the same events
    // until one answers (a duplicate in the log is what every view must take anyway).
    for (;;) {
      try {
        await store.append(batch);
        break;
      } catch {
        await sleep(200);
      }
    }
    expected.record(batch);
    await sleep(50);
  }
}

/** The allowance from the log itself: active recipients of each organization's distinct MessageIDs this month. */
async function allowanceInLog(): Promise<Map<string, number>> {
  const byOrg = new Map<string, Map<string, number>>();
  await store.readAll([store.topics.messages], async (items) => {
    for (const { event } of items) {
      if (event?.type !== 'MessageAccepted') continue;
      const data = (event as MessageAccepted).data;
      if (allowancePeriod(data.submittedAt) !== allowancePeriod(Date.now())) continue;
      const org = event.metadata.organizationId;
      const messages = byOrg.get(org) ?? new Map<string, number>();
      messages.set(data.messageId, data.activeRecipients.length);
      byOrg.set(org, messages);
    }
  });
  return new Map([...byOrg].map(([org, messages]) => [org, [...messages.values()].reduce((a, b) => a + b, 0)]));
}

/** Per view: the sum over its partitions of the offset it has applied up to (what a restore sends back). */
async function appliedOffsets(): Promise<Record<string, number>> {
  const result: Record<string, number> = {};
  for (const view of ['suppressions', 'accounts', 'allowance'] as const) {
    const stored = await new ViewPositions(redis, positionsKeyOf('sl', view)).all();
    result[view] = [...stored.values()].reduce((sum, offset) => sum + Number(offset) + 1, 0);
  }
  return result;
}

async function viewsEqualReplay(): Promise<Record<string, { equal: boolean; events: number; differences: number }>> {
  const reports: Record<string, { equal: boolean; events: number; differences: number }> = {};
  for (const view of ['suppressions', 'accounts', 'allowance'] as const) {
    const report = await replayView(view, {
      store,
      redis,
      liveGroupId: groupOf(view, groupPrefix),
      dryRun: true,
      waitForLiveMs: 30_000,
    });
    reports[view] = { equal: report.equal, events: report.events, differences: report.differenceCount };
  }
  return reports;
}

describe('Redis killed under a stream of view events', () => {
  it('leaves every view equal to a replay and the allowance equal to the log, after a kill and after lost writes', async () => {
    const config = await redis.config('GET', 'append*');
    expect(config).toEqual(expect.arrayContaining(['appendonly', 'yes', 'appendfsync', 'everysec']));

    const expected = new Expected();
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const streaming = stream(expected, finished);
    const redisDir = join(stack.dir, 'redis');
    const aof = join(redisDir, 'appendonlydir');
    const copy = join(stack.dir, 'appendonlydir.earlier');
    const figures: Record<string, unknown> = {};

    // 1. SIGKILL mid-stream, started again on its append-only file.
    await sleep(4000);
    const beforeKill = expected.appended;
    await stack.kill('redis');
    const killedAt = Date.now();
    await sleep(1500);
    await stack.start('redis');
    figures.kill = { appendedBefore: beforeKill, downMs: Date.now() - killedAt };

    // 2. A copy of the append-only file now; four seconds of writes later, Redis dies and comes back from the copy.
    await sleep(3000);
    rmSync(copy, { recursive: true, force: true });
    const atCopy = await appliedOffsets();
    cpSync(aof, copy, { recursive: true });
    const copiedAt = expected.appended;
    await sleep(4000);
    const atKill = await appliedOffsets();
    await stack.kill('redis');
    rmSync(aof, { recursive: true, force: true });
    cpSync(copy, aof, { recursive: true });
    await stack.start('redis');
    const restoredAt = Date.now();
    figures.lostWrites = {
      appendedWhenCopied: copiedAt,
      appendedWhenRestored: expected.appended,
      // Events each view had applied (and its group committed) that the restored file no longer holds.
      viewEventsLost: Object.fromEntries(Object.entries(atKill).map(([view, n]) => [view, n - (atCopy[view] ?? 0)])),
    };

    await sleep(3000);
    finish();
    await streaming;
    const streamEnded = Date.now();

    // Every view equal to a replay of its topics, the suppressions to the events, the allowance to the log.
    const suppressions = new SuppressionView(redis);
    const allowance = new AllowanceView();
    await waitUntil(
      async () => {
        for (const org of expected.organizations) {
          const live = (await suppressions.list(org)).map((entry) => entry.emailAddress).sort();
          if (live.join() !== [...(expected.suppressed.get(org) ?? [])].sort().join()) return false;
          if ((await allowance.logged(redis, org, allowancePeriod(Date.now()))) !== expected.usage(org)) return false;
        }
        return true;
      },
      120_000,
      'the views to equal the events',
    );
    const convergedAt = Date.now();
    const reports = await viewsEqualReplay();
    const inLog = await allowanceInLog();
    const perOrganization = await Promise.all(
      expected.organizations.map(async (org) => ({
        org: org.slice(0, 8),
        log: inLog.get(org) ?? 0,
        view: await allowance.logged(redis, org, allowancePeriod(Date.now())),
        used: await new AllowanceCounter(redis).used(org, allowancePeriod(Date.now())),
        suppressed: expected.suppressed.get(org)?.size ?? 0,
      })),
    );
    console.log(
      'chaos views:',
      JSON.stringify({
        eventsAppended: expected.appended,
        ...figures,
        equalToEventsMsAfterRestore: convergedAt - restoredAt,
        equalToEventsMsAfterStreamEnd: convergedAt - streamEnded,
        replay: reports,
        allowance: perOrganization,
      }),
    );
    for (const view of Object.keys(reports)) expect(reports[view]!.equal, view).toBe(true);
    for (const row of perOrganization) {
      expect(row.view).toBe(row.log);
      expect(row.used).toBe(row.log);
    }
  });

  it('counts a send whose append "failed" but landed within seconds, and never refunds it', async () => {
    const org = randomUUID();
    const period = allowancePeriod(Date.now());
    const counter = new AllowanceCounter(redis);
    // The API held the message, its append threw (no answer from the broker), the event landed anyway.
    const landed = accepted(org, { to: ['a@example.net', 'b@example.net', 'c@example.net'] });
    expect(await counter.reserve(org, period, [{ messageId: landed.data.messageId, recipients: 3 }], 10)).toBe(true);
    // Another whose process died between the append and its hold being of any use: in the log, with no hold.
    const unheld = accepted(org, { to: ['d@example.net'] });
    const appendedAt = Date.now();
    await store.append([landed, unheld]);
    let usage = await counter.usage(org, period);
    await waitUntil(
      async () => {
        usage = await counter.usage(org, period);
        return usage.logged === 4;
      },
      30_000,
      'the landed messages to be counted',
    );
    const countedMs = Date.now() - appendedAt;
    console.log('chaos views, append failed but landed:', JSON.stringify({ countedMs, usage }));
    expect(usage).toEqual({ logged: 4, held: 0, used: 4 });
    expect((await allowanceInLog()).get(org)).toBe(4);
  });
});
