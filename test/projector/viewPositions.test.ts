import { randomUUID } from 'node:crypto';
import { Partitioners } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowancePeriod, type MessageAccepted } from '@sendline/domain';
import { replayView } from '@sendline/application';
import { startProjector, type RunningProjector } from '@sendline/projector';
import {
  AllowanceCounter,
  AllowanceView,
  createClickHouse,
  createRedis,
  positionsKeyOf,
  SuppressionView,
  ViewPositions,
  type ClickHouseClient,
  type EventStore,
  type Redis,
  type StoredEvent,
  deleteKeys,
  scanKeys,
  endOffsets,
  groupOf,
} from '@sendline/infra';
import { addresses, deleteTopicsAndDisconnect, eventually, freshEventStore, uniqueName } from '../support/services';
import { accepted, accountEvents, suppressionAdded, suppressionDeleted } from './support';

/**
 * The Redis views keep their position with their data, and the allowance is counted from the log: against the
 * real Kafka and Redis, on topics and a key namespace of this file's own.
 */

let store: EventStore;
let redis: Redis;
let clickhouse: ClickHouseClient;
const namespace = uniqueName('test-positions');
const running: RunningProjector[] = [];

beforeAll(async () => {
  store = await freshEventStore('view-positions-test');
  redis = createRedis(addresses.redisUrl);
  clickhouse = createClickHouse(addresses.clickhouseUrl);
});

afterAll(async () => {
  for (const projector of running) await projector.stop();
  await deleteKeys(redis, `${namespace}*`);
  redis.disconnect();
  await clickhouse.close();
  await deleteTopicsAndDisconnect(store);
});

const start = async (groupPrefix: string) => {
  const projector = await startProjector({
    store,
    redis,
    // The ClickHouse activity store is not among these projections.
    clickhouse,
    database: addresses.clickhouseDatabase,
    namespace,
    groupPrefix,
    projections: ['suppressions', 'accounts', 'allowance'],
    retention: false,
    sessionTimeoutMs: 6000,
  });
  running.push(projector);
  return projector;
};
const stop = async (projector: RunningProjector) => {
  await projector.stop();
  running.splice(running.indexOf(projector), 1);
};

/** The keys of the three views and their positions in this file's namespace, with their values (DUMP). */
async function snapshot(): Promise<Map<string, Buffer>> {
  const keys = (
    await Promise.all(
      [
        `${namespace}:{suppressions}:*`,
        `${namespace}:{accounts}:*`,
        `${namespace}:{allowance}:*`,
        `${namespace}:positions:*`,
      ].map((pattern) => scanKeys(redis, pattern)),
    )
  ).flat();
  const result = new Map<string, Buffer>();
  for (const key of keys) {
    const value = await redis.dumpBuffer(key);
    if (value) result.set(key, value);
  }
  return result;
}

/** Puts the views back as they were in `before`: what a Redis that lost its last writes comes back with. */
async function restore(before: Map<string, Buffer>): Promise<void> {
  const now = (await snapshot()).keys();
  for (const key of now) await redis.del(key);
  for (const [key, value] of before) await redis.restore(key, 0, value, 'REPLACE');
}

/** A message id that the default partitioner puts on the same partition (of 3) as `messageId`. */
function onPartitionOf(messageId: string): string {
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = [0, 1, 2].map((partitionId) => ({
    partitionId,
    leader: 0,
    partitionErrorCode: 0,
    replicas: [0],
    isr: [0],
  }));
  const of = (key: string) =>
    partitioner({ topic: store.topics.messages, partitionMetadata, message: { key, value: null } });
  for (;;) {
    const candidate = randomUUID();
    if (of(candidate) === of(messageId)) return candidate;
  }
}

const logged = (organizationId: string, at = Date.now()) =>
  new AllowanceView(namespace).logged(redis, organizationId, allowancePeriod(at));

/** What the log says an organization used: active recipients of its distinct MessageIDs this month. */
async function usageInLog(organizationId: string): Promise<number> {
  const seen = new Map<string, number>();
  await store.readAll([store.topics.messages], async (items) => {
    for (const { event } of items) {
      if (event?.type !== 'MessageAccepted' || event.metadata.organizationId !== organizationId) continue;
      const data = (event as MessageAccepted).data;
      if (allowancePeriod(data.submittedAt) === allowancePeriod(Date.now()))
        seen.set(data.messageId, data.activeRecipients.length);
    }
  });
  return [...seen.values()].reduce((sum, n) => sum + n, 0);
}

describe('the allowance view', () => {
  it('counts active recipients once per MessageID, whatever arrives twice', async () => {
    const org = randomUUID();
    const one = accepted(org, { to: ['a@example.net', 'b@example.net'], suppressed: ['b@example.net'] });
    const two = accepted(org, { to: ['c@example.net', 'd@example.net'], cc: ['e@example.net'] });
    // A keyed retry: the same MessageID in a second event (its own event id), and the very same event again.
    const retry: MessageAccepted = { ...two, metadata: { ...two.metadata, eventId: randomUUID() } };
    await store.append([one, two, two, retry] as StoredEvent[]);
    await start(uniqueName('allowance'));
    await eventually(async () => ((await logged(org)) === 4 ? true : undefined), 30_000, 'the allowance view');
    expect(await usageInLog(org)).toBe(4);
    await store.append([retry] as StoredEvent[]);
    const marker = accepted(org, { to: ['f@example.net'] });
    await store.append([marker] as StoredEvent[]);
    await eventually(async () => ((await logged(org)) === 5 ? true : undefined), 30_000, 'the last message counted');
    expect(await logged(org)).toBe(await usageInLog(org));
  });

  it('holds for sends in flight, turns a hold into the count when its event lands, and lets one that never lands expire', async () => {
    const org = randomUUID();
    const period = allowancePeriod(Date.now());
    const counter = new AllowanceCounter(redis, namespace, { holdMs: 1500 });
    const landed = accepted(org, { to: ['x@example.net', 'y@example.net'] });
    const lost = randomUUID();
    expect(await counter.reserve(org, period, [{ messageId: landed.data.messageId, recipients: 2 }], 4)).toBe(true);
    expect(await counter.reserve(org, period, [{ messageId: lost, recipients: 1 }], 4)).toBe(true);
    expect(await counter.usage(org, period)).toEqual({ logged: 0, held: 3, used: 3 });
    // Over the limit: refused, nothing held.
    expect(await counter.reserve(org, period, [{ messageId: randomUUID(), recipients: 2 }], 4)).toBe(false);
    // A retry of a message already held reserves nothing new, even at the limit.
    expect(await counter.reserve(org, period, [{ messageId: landed.data.messageId, recipients: 2 }], 3)).toBe(true);
    expect(await counter.used(org, period)).toBe(3);

    // The append "failed" (the API answered 503) but the event landed: nothing was refunded, and the projector
    // turns the hold into the count.
    await store.append([landed] as StoredEvent[]);
    await start(uniqueName('holds'));
    const converted = await eventually(
      async () => {
        const usage = await counter.usage(org, period);
        return usage.logged === 2 ? usage : undefined;
      },
      30_000,
      'the landed message to be counted',
    );
    expect(converted.used).toBeLessThanOrEqual(3);
    // The hold whose event never landed expires; the allowance is then exactly the log.
    const settled = await eventually(
      async () => {
        const usage = await counter.usage(org, period);
        return usage.held === 0 ? usage : undefined;
      },
      10_000,
      'the lost hold to expire',
    );
    expect(settled).toEqual({ logged: 2, held: 0, used: 2 });
    expect(settled.used).toBe(await usageInLog(org));
    // Counted from the log: a retry of the counted message holds nothing.
    expect(await counter.reserve(org, period, [{ messageId: landed.data.messageId, recipients: 2 }], 2)).toBe(true);
    expect(await counter.used(org, period)).toBe(2);
  });
});

describe('view positions', () => {
  it('are written with the view, and a view that lost writes is rebuilt from where it is, not from the group', async () => {
    const org = randomUUID();
    const firstHalf = [
      ...accountEvents(org),
      suppressionAdded(org, 'one@example.net'),
      suppressionAdded(org, 'two@example.net'),
      accepted(org, { to: ['m1@example.net'] }),
    ];
    await store.append(firstHalf as StoredEvent[]);
    const prefix = uniqueName('positions');
    const projector = await start(prefix);
    const views = new SuppressionView(redis, namespace);
    await eventually(
      async () => ((await views.list(org)).length === 2 && (await logged(org)) === 1 ? true : undefined),
      30_000,
      'the first half',
    );
    // Each view's position is the last offset of its topics' partitions.
    const positions = new ViewPositions(redis, positionsKeyOf(namespace, 'suppressions'));
    const ends = await endOffsets(store, [store.topics.suppressions]);
    await eventually(
      async () => {
        const stored = await positions.all();
        return [...ends].every(([slot, end]) => end === 0n || stored.get(slot) === end - 1n) ? true : undefined;
      },
      10_000,
      'the suppressions positions',
    );
    const before = await snapshot();

    // The second half is applied and committed by the group...
    await store.append([
      suppressionDeleted(org, 'one@example.net'),
      suppressionAdded(org, 'three@example.net'),
      accepted(org, { to: ['m2@example.net', 'm3@example.net'] }),
    ] as StoredEvent[]);
    await eventually(
      async () => ((await views.list(org)).length === 2 && (await logged(org)) === 3 ? true : undefined),
      30_000,
      'the second half',
    );
    await stop(projector);

    // ...then Redis comes back without it (a crash that lost the last writes): the projector starts where the view
    // is, not where the group committed, and applies the second half again.
    await restore(before);
    expect((await views.list(org)).map((entry) => entry.emailAddress)).toEqual(['one@example.net', 'two@example.net']);
    await start(prefix);
    await eventually(
      async () => {
        const addresses = (await views.list(org)).map((entry) => entry.emailAddress).sort();
        return addresses.join() === 'three@example.net,two@example.net' && (await logged(org)) === 3 ? true : undefined;
      },
      30_000,
      'the view rebuilt from its own position',
    );

    // The same while the projector runs. The next event on a partition whose view is behind shows it (the batch
    // was fetched past the view's position), and the projector goes back to where the view is.
    const beforeRunning = await snapshot();
    const m4 = accepted(org, { to: ['m4@example.net'] });
    await store.append([m4] as StoredEvent[]);
    await eventually(async () => ((await logged(org)) === 4 ? true : undefined), 30_000, 'm4 counted');
    await restore(beforeRunning);
    expect(await logged(org)).toBe(3);
    const m5 = accepted(org, { messageId: onPartitionOf(m4.data.messageId), to: ['m5@example.net'] });
    await store.append([m5] as StoredEvent[]);
    await eventually(
      async () => ((await logged(org)) === 5 ? true : undefined),
      30_000,
      'the running projector to go back to the view',
    );
    // And without a next event: Redis coming back (a restart drops the connection) sends every view back to its
    // own position.
    const beforeReconnect = await snapshot();
    await store.append([
      suppressionAdded(org, 'four@example.net'),
      accepted(org, { to: ['m6@example.net'] }),
    ] as StoredEvent[]);
    await eventually(
      async () => ((await views.list(org)).length === 3 && (await logged(org)) === 6 ? true : undefined),
      30_000,
      'four and m6',
    );
    await restore(beforeReconnect);
    redis.disconnect(true);
    await eventually(
      async () => ((await views.list(org)).length === 3 && (await logged(org)) === 6 ? true : undefined),
      30_000,
      'the views to come back after the reconnection',
    );
    expect(await logged(org)).toBe(await usageInLog(org));

    // A replay rebuilds each view with its positions, equal to the live one.
    for (const view of ['suppressions', 'accounts', 'allowance'] as const) {
      const report = await replayView(view, {
        store,
        redis,
        namespace,
        liveGroupId: groupOf(view, prefix),
        settleMs: 500,
      });
      expect(report.equal, `${view}: ${report.summary}`).toBe(true);
      expect(report.swapped).toBe(true);
    }
    expect((await new ViewPositions(redis, positionsKeyOf(namespace, 'allowance')).all()).size).toBeGreaterThan(0);
    expect(await logged(org)).toBe(6);
  });
});
