import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageEvent } from '@sendline/domain';
import { replayProgressBar } from '@sendline/admin';
import { replayView, type ReplayOptions } from '@sendline/application';
import { startProjector, type RunningProjector } from '@sendline/projector';
import {
  AccountsView,
  activityFingerprints,
  ClickHouseActivityReader,
  createRedis,
  SuppressionView,
  type ClickHouseClient,
  type EventStore,
  type Redis,
  type StoredEvent,
  deleteKeys,
  scanKeys,
} from '@sendline/infra';
import { deleteTopicsAndDisconnect, eventually, freshEventStore, uniqueName } from '../support/services';
import {
  accountEvents,
  inboundAccountEvents,
  accepted,
  cameBack,
  delivered,
  expectedStatus,
  freshActivityDatabase,
  lifecycle,
  sent,
  suppressionAdded,
  suppressionDeleted,
} from './support';

/** A stream that looks like a terminal and keeps what was written to it. */
function fakeTerminal() {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  }) as Writable & { isTTY: boolean; columns: number };
  stream.isTTY = true;
  stream.columns = 160;
  return { stream, text: () => text };
}

describe('replay: rebuild a view from its topics, compare, swap', () => {
  let store: EventStore;
  let redis: Redis;
  let client: ClickHouseClient;
  let database: string;
  let dropDatabase: () => Promise<void>;
  let projector: RunningProjector;
  const namespace = uniqueName('test-replay');
  const prefix = uniqueName('projector');
  const [orgA, orgB, orgC] = [randomUUID(), randomUUID(), randomUUID()];
  const messageEvents: MessageEvent[] = [];

  beforeAll(async () => {
    store = await freshEventStore('replay-test');
    redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    ({ client, database, drop: dropDatabase } = await freshActivityDatabase('test_replay'));
    messageEvents.push(
      ...Array.from({ length: 40 }, (_, n) => lifecycle(orgA, n)).flat(),
      ...Array.from({ length: 15 }, (_, n) => lifecycle(orgB, n)).flat(),
      // Mail that came back: DSN hard bounces after the delivery, complaints, automatic replies, delay notices.
      ...Array.from({ length: 8 }, (_, n) => cameBack(orgC, n)).flat(),
    );
    const accountsOfA = accountEvents(orgA);
    await store.append([
      ...accountsOfA,
      // Inbound settings and rules: the replay rebuilds them (and the inbound address's index) with the rest.
      ...inboundAccountEvents(orgA, accountsOfA),
      ...accountEvents(orgB),
      suppressionAdded(orgA, 'one@example.net'),
      suppressionAdded(orgA, 'two@example.net'),
      suppressionAdded(orgB, 'three@example.net'),
      suppressionDeleted(orgA, 'one@example.net'),
      ...messageEvents,
    ] as StoredEvent[]);
    projector = await startProjector({
      store,
      redis,
      clickhouse: client,
      database,
      namespace,
      groupPrefix: prefix,
      retention: false,
      sessionTimeoutMs: 6000,
      writer: { maxDelayMs: 50 },
    });
    const reader = new ClickHouseActivityReader(client, database);
    await eventually(
      async () => {
        const [a, b, c] = await Promise.all([
          reader.list(orgA, { count: 1, offset: 0 }),
          reader.list(orgB, { count: 1, offset: 0 }),
          reader.list(orgC, { count: 100, offset: 0, status: 'bounced' }),
        ]);
        const suppressions = await new SuppressionView(redis, namespace).list(orgB);
        const account = await new AccountsView(redis, namespace).organization(orgB);
        return a.total === 40 &&
          b.total === 15 &&
          c.total === 2 &&
          suppressions.length === 1 &&
          account?.messagesPerMonth === 1000
          ? true
          : undefined;
      },
      60_000,
      'the live projector to catch up',
    );
  });
  afterAll(async () => {
    await projector.stop();
    await deleteKeys(redis, `${namespace}*`);
    redis.disconnect();
    await dropDatabase();
    await deleteTopicsAndDisconnect(store);
  });

  const options = (
    view: 'suppressions' | 'accounts' | 'activity',
    extra: Partial<ReplayOptions> = {},
  ): ReplayOptions => ({
    store,
    redis,
    namespace,
    clickhouse: client,
    database,
    liveGroupId: `${prefix}-${view}`,
    settleMs: 300,
    ...extra,
  });
  const replayKeysLeft = async () => (await scanKeys(redis, `${namespace}.replay.*`)).length;
  const databases = async () =>
    (await (await client.query({ query: 'SHOW DATABASES', format: 'JSONEachRow' })).json<{ name: string }>()).map(
      (d) => d.name,
    );

  it('suppressions: the rebuilt view equals the live one, is swapped in, and the live view reads the same', async () => {
    const view = new SuppressionView(redis, namespace);
    const before = [await view.list(orgA), await view.list(orgB)];
    const terminal = fakeTerminal();
    // The console command's progress bar, fed by the replay's progress.
    const bar = replayProgressBar('suppressions', terminal.stream);
    const report = await replayView('suppressions', options('suppressions', { onProgress: (p) => bar.update(p) }));
    bar.stop();
    expect(report).toMatchObject({
      view: 'suppressions',
      topics: [store.topics.suppressions],
      live: namespace,
      events: 4,
      equal: true,
      differenceCount: 0,
      swapped: true,
      organizations: { live: 2, rebuilt: 2 },
    });
    expect([await view.list(orgA), await view.list(orgB)]).toEqual(before);
    expect(before[0]!.map((s) => s.emailAddress)).toEqual(['two@example.net']);
    expect(await replayKeysLeft()).toBe(0);
    expect(terminal.text()).toMatch(/replay suppressions .*4\/4 events \| \d+ events\/s \| ETA/);
  });

  it('accounts: the rebuilt view equals the live one and is swapped in', async () => {
    const view = new AccountsView(redis, namespace);
    const before = [await view.organizationState(orgA), await view.organizationState(orgB)];
    const report = await replayView('accounts', options('accounts'));
    expect(report).toMatchObject({
      view: 'accounts',
      equal: true,
      swapped: true,
      organizations: { live: 2, rebuilt: 2 },
    });
    expect(report.events).toBe(16);
    expect([await view.organizationState(orgA), await view.organizationState(orgB)]).toEqual(before);
    expect(before[0]!.server?.inboundHookUrl).toBe('https://hooks.example.test/inbound');
    expect([...before[0]!.inboundRules]).toEqual([[12, 'bad@example.net']]);
    expect(await view.organizationOfInboundHash(before[0]!.server!.inboundHash)).toBe(orgA);
    expect(await replayKeysLeft()).toBe(0);
  });

  it('activity: the rebuilt database equals the live one, swaps in by RENAME, and the live projector writes on into it', async () => {
    const reader = new ClickHouseActivityReader(client, database);
    // Events the live projector may not have written yet when the replay starts: the replay waits for it.
    const late = accepted(orgA, { to: ['late@example.net'] });
    await store.append([late, sent(late)]);
    const report = await replayView('activity', options('activity'));
    expect(report).toMatchObject({ view: 'activity', live: database, equal: true, swapped: true });
    expect(report.events + report.caughtUp).toBeGreaterThanOrEqual(messageEvents.length + 2);
    expect(report.rebuilt).toMatch(new RegExp(`^${database}_replay_`));
    expect(await databases()).not.toContain(report.rebuilt);
    const prints = await activityFingerprints(client, database);
    expect(prints.get(orgA)?.counts).toEqual({ messages: 41, events: (40 / 5) * (3 + 3 + 4 + 3 + 1) + 2 });
    // What came back was rebuilt the same: each message's four events, the two late bounces' messages Bounced.
    expect(prints.get(orgC)?.counts).toEqual({ messages: 8, events: 8 * 4 });
    expect((await reader.list(orgC, { count: 100, offset: 0, status: 'bounced' })).total).toBe(2);
    expect((await reader.details(orgA, late.data.messageId))?.status).toBe('Sent');

    // After the swap the running projector writes into the swapped-in tables (and forgets rows it held).
    await store.append([delivered(late, 'late@example.net')]);
    await eventually(
      async () => ((await reader.details(orgA, late.data.messageId))?.status === 'Delivered' ? true : undefined),
      30_000,
      'the live projector to write into the swapped-in tables',
    );
  });

  it('reports a difference and leaves the live view untouched; with force it swaps the rebuilt view in', async () => {
    const view = new SuppressionView(redis, namespace);
    const expected = await view.list(orgB);
    // A projector bug: an entry lost from the live view.
    await redis.hdel(view.keyOf(orgB), 'three@example.net');
    const report = await replayView('suppressions', options('suppressions', { waitForLiveMs: 1000 }));
    expect(report).toMatchObject({ equal: false, swapped: false, differenceCount: 1 });
    expect(report.differences).toEqual([
      {
        organizationId: orgB,
        live: null,
        rebuilt: { count: 1, checksum: expect.any(String), counts: { suppressions: 1 } },
      },
    ]);
    expect(report.summary).toMatch(/1 of 2 organizations differ; the live view was left as it was/);
    expect(await view.list(orgB)).toEqual([]);
    expect(await replayKeysLeft()).toBe(0);

    const forced = await replayView('suppressions', options('suppressions', { waitForLiveMs: 1000, force: true }));
    expect(forced).toMatchObject({ equal: false, swapped: true });
    expect(await view.list(orgB)).toEqual(expected);
  });

  it('activity: a wrong row in the live store is reported, and fixed by a forced swap', async () => {
    const reader = new ClickHouseActivityReader(client, database);
    const queued = messageEvents.filter((e) => e.type === 'MessageAccepted' && e.metadata.organizationId === orgB)[4]!;
    const id = queued.data.messageId;
    expect((await reader.details(orgB, id))?.status).toBe(expectedStatus([queued]));
    // A projector bug wrote it as Delivered under a high version (ClickHouse 18.16 has no SELECT * REPLACE).
    const columns = (
      await (
        await client.query({ query: `DESCRIBE TABLE ${database}.messages`, format: 'JSONEachRow' })
      ).json<{ name: string }>()
    ).map((c) => c.name);
    const select = columns.map((c) =>
      c === 'status' ? `'Delivered' AS status` : c === 'version' ? 'toUInt64(999) AS version' : c,
    );
    await client.command({
      query: `INSERT INTO ${database}.messages (${columns.join(', ')}) SELECT ${select.join(', ')} FROM ${database}.messages FINAL WHERE message_id = '${id}'`,
    });
    expect((await reader.details(orgB, id))?.status).toBe('Delivered');

    const report = await replayView('activity', options('activity', { waitForLiveMs: 1000 }));
    expect(report).toMatchObject({ equal: false, swapped: false, differenceCount: 1 });
    expect(report.differences[0]?.organizationId).toBe(orgB);
    expect((await reader.details(orgB, id))?.status).toBe('Delivered');
    expect(await databases()).not.toContain(report.rebuilt);

    const forced = await replayView(
      'activity',
      options('activity', { waitForLiveMs: 1000, force: true, keepPrevious: true }),
    );
    expect(forced.swapped).toBe(true);
    expect((await reader.details(orgB, id))?.status).toBe('Queued');
    // The replaced tables were kept for inspection, as asked.
    expect(forced.kept).toContain(`${forced.rebuilt}.messages_previous`);
    await client.command({ query: `DROP DATABASE ${forced.rebuilt}` });
  });

  it('a dry run compares only', async () => {
    const report = await replayView('accounts', options('accounts', { dryRun: true }));
    expect(report).toMatchObject({ equal: true, swapped: false });
    expect(report.summary).toMatch(/not swapped \(dry run\)/);
    expect(await replayKeysLeft()).toBe(0);
  });

  it('compares a Redis view by what it holds when its group committed less (a projector killed before its commit)', async () => {
    // A live group whose committed offsets stay behind the view: members, so the replay would wait for it, and no
    // commit to come on the suppressions topic (its member reads another topic). The view's own positions say it
    // holds every event: the replay compares at once instead of waiting for a commit that will not come.
    const groupId = `${prefix}-behind-${randomUUID().slice(0, 8)}`;
    const admin = store.kafka.admin();
    await admin.connect();
    const partitions = await admin.fetchTopicOffsets(store.topics.suppressions);
    await admin.setOffsets({
      groupId,
      topic: store.topics.suppressions,
      partitions: partitions.map(({ partition }) => ({ partition, offset: '0' })),
    });
    const member = store.kafka.consumer({ groupId, sessionTimeout: 6000 });
    await member.connect();
    await member.subscribe({ topics: [store.topics.accounts] });
    await member.run({ eachMessage: async () => undefined });
    try {
      await eventually(
        async () => ((await admin.describeGroups([groupId])).groups[0]?.members.length ? true : undefined),
        60_000,
        'the behind group to have a member',
      );
      const said: string[] = [];
      const report = await replayView(
        'suppressions',
        // Were the group's offsets what the replay waits for, this wait would outlast the test's hang guard.
        options('suppressions', {
          liveGroupId: groupId,
          dryRun: true,
          waitForLiveMs: 600_000,
          logger: { info: (_f, m) => said.push(m) },
        }),
      );
      expect(report).toMatchObject({ equal: true, caughtUp: 0, swapped: false });
      expect(said).not.toContain('the live view did not reach what the replay read in time');
    } finally {
      await member.disconnect();
      await admin.deleteGroups([groupId]).catch(() => undefined);
      await admin.disconnect();
    }
  });
});
