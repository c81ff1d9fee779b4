/**
 * The console's audit keeps its history although the `accounts` topic is compacted: the projector's archiver copies
 * every account event to the never-compacted `accounts.history` topic (keyed by organization), the audit view is
 * projected from there, and `replay audit` rebuilds every entry even when the compacted topic holds only each
 * entity's latest event. Compaction is simulated honestly: a second `accounts` topic holding only the latest record
 * of each key, as Kafka's cleaner leaves it, which the replays then read instead of the original. The command line
 * (`admin replay audit`) says what it rebuilt from where.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsService, replayView, type ReplayOptions, type ReplayReport } from '@sendline/application';
import { startAccountsArchiver, startProjector, type RunningProjector } from '@sendline/projector';
import {
  AccountsView,
  createClickHouse,
  createRedis,
  EventStore,
  mailHostFromEnv,
  mxResolverFromEnv,
  prefixedTopicNames,
  deleteKeys,
  secretKeyFromEnv,
  topicConfigs,
  txtResolverFromEnv,
  type AuditEntry,
  type ClickHouseClient,
  type ConsumedEvent,
  type Redis,
  type StoredEvent,
  archiverGroupOf,
} from '@sendline/infra';
import { admin } from '../accounts/adminCli';
import { addresses, deleteTopicsAndDisconnect, eventually, freshEventStore, uniqueName } from '../support/services';
import { accountEvents } from './support';

/** Every event of a topic, as read from its beginning. */
async function readTopic(store: EventStore, topic: string): Promise<ConsumedEvent[]> {
  const all: ConsumedEvent[] = [];
  await store.readAll([topic], async (items) => {
    all.push(...items);
  });
  return all;
}

describe('the audit, projected from the account history', () => {
  let store: EventStore;
  let compacted: EventStore;
  let redis: Redis;
  let clickhouse: ClickHouseClient;
  let projector: RunningProjector;
  const namespace = uniqueName('test-audit');
  const prefix = uniqueName('projector');
  const [orgA, orgB] = [randomUUID(), randomUUID()];

  beforeAll(async () => {
    store = await freshEventStore('audit-test');
    // The same topics, but an `accounts` topic of its own: the compacted copy the replays read.
    compacted = new EventStore({
      brokers: addresses.kafkaBrokers,
      registryUrl: addresses.schemaRegistryUrl,
      clientId: 'audit-test-compacted',
      topics: { ...store.topics, accounts: `${store.topics.accounts}.compacted` },
    });
    await compacted.ensureTopics(
      topicConfigs(compacted.topics, 3).filter((config) => config.topic === compacted.topics.accounts),
    );
    redis = createRedis(addresses.redisUrl);
    clickhouse = createClickHouse(addresses.clickhouseUrl);
    projector = await startProjector({
      store,
      redis,
      clickhouse,
      database: 'unused',
      namespace,
      groupPrefix: prefix,
      projections: ['accounts', 'audit'],
      retention: false,
      sessionTimeoutMs: 6000,
    });
  });
  afterAll(async () => {
    await projector?.stop();
    await deleteKeys(redis, `${namespace}*`);
    redis.disconnect();
    await clickhouse.close();
    const admin = compacted.kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [compacted.topics.accounts] }).catch(() => undefined);
    await admin.disconnect();
    await compacted.disconnect();
    await deleteTopicsAndDisconnect(store);
  });

  const options = (extra: Partial<ReplayOptions> = {}): ReplayOptions => ({
    store: compacted,
    redis,
    namespace,
    settleMs: 300,
    ...extra,
  });

  it('keeps every entry through a replay when the compacted topic holds only each entity’s latest event', async () => {
    // The console's use cases, writing into a view of their own (with their audit, at once): the live views are
    // the projector's alone, built from the topics.
    const writerView = new AccountsView(redis, `${namespace}-writer`);
    const accounts = new AccountsService({
      store,
      view: writerView,
      mailHost: mailHostFromEnv(),
      secretKey: () => secretKeyFromEnv(),
      resolveTxt: txtResolverFromEnv(),
      resolveMx: mxResolverFromEnv(),
      actor: 'ops@acme.example',
    });
    await accounts.createOrganization({ id: orgA, name: 'Acme', adminEmail: 'admin@acme.example' });
    await accounts.createOrganization({ id: orgB, name: 'Bolt', adminEmail: 'admin@bolt.example' });
    // One member's whole story: compaction keeps only its last event.
    await accounts.addMember(orgA, 'bob@acme.example', 'viewer');
    await accounts.changeMemberRole(orgA, 'bob@acme.example', 'developer');
    await accounts.changeMemberRole(orgA, 'bob@acme.example', 'admin');
    await accounts.removeMember(orgA, 'bob@acme.example');
    const key = await accounts.issueApiKey(orgA, { name: 'CI', scopes: ['email:send'], mode: 'test' });
    await accounts.revokeApiKey(orgA, key.id);
    await accounts.setAllowance(orgA, 1000);
    await accounts.setAllowance(orgA, 2000);
    await accounts.addMember(orgB, 'eve@bolt.example', 'developer');

    const expected = (await writerView.audit(orgA, 500, 0)).entries;
    expect(expected.map((entry) => entry.action).sort()).toEqual([
      'AllowanceSet',
      'AllowanceSet',
      'ApiKeyIssued',
      'ApiKeyRevoked',
      'MemberAdded',
      'MemberAdded',
      'MemberRemoved',
      'MemberRoleChanged',
      'MemberRoleChanged',
      'OrganizationCreated',
    ]);
    expect(expected.every((entry) => entry.actor === 'ops@acme.example')).toBe(true);

    // The live audit is the projector's, from the history the archiver copied: every entry, as the page reads it.
    const live = new AccountsView(redis, namespace);
    const liveAudit = async (org: string) => (await live.audit(org, 500, 0)).entries;
    await eventually(
      async () => ((await liveAudit(orgA)).length === expected.length ? true : undefined),
      60_000,
      'the archiver and the audit projection',
    );
    expect(await liveAudit(orgA)).toEqual(expected);

    // The history: every account event once at least, each organization's in one partition (keyed by it).
    const accountEventsRead = await readTopic(store, store.topics.accounts);
    const history = await readTopic(store, store.topics.accountsHistory);
    const ids = (items: ConsumedEvent[]) => new Set(items.map((item) => item.event!.metadata.eventId));
    expect(ids(history)).toEqual(ids(accountEventsRead));
    for (const org of [orgA, orgB]) {
      const ofOrg = history.filter((item) => item.event!.metadata.organizationId === org);
      expect(new Set(ofOrg.map((item) => item.position.partition)).size).toBe(1);
      expect(new Set(ofOrg.map((item) => item.position.key))).toEqual(new Set([org]));
    }

    // Compaction, as Kafka's cleaner leaves the topic: the latest record of each key, unchanged.
    const latest = new Map<string, ConsumedEvent>();
    for (const item of accountEventsRead) latest.set(item.position.key!, item);
    await compacted.appendRecords(
      [...latest.values()].map(({ message, position }) => ({
        topic: compacted.topics.accounts,
        key: position.key!,
        value: message.value!,
        headers: message.headers ?? {},
      })),
    );
    const compactedOfA = (await readTopic(compacted, compacted.topics.accounts)).filter(
      (item) => item.event!.metadata.organizationId === orgA,
    );
    // Bob's four events are one now, the key's two one, the allowance's two one: the compacted topic lost history.
    expect(compactedOfA.length).toBe(expected.length - 5);

    // The accounts view rebuilt from the compacted topic is still whole (each entity's latest state), and its swap
    // leaves the audit alone.
    const accountsReport = await replayView('accounts', options({ liveGroupId: `${prefix}-accounts` }));
    expect(accountsReport).toMatchObject({ view: 'accounts', topics: [compacted.topics.accounts], equal: true });
    expect(accountsReport.swapped).toBe(true);
    expect(accountsReport.summary).toContain('`replay audit` rebuilds it from');
    expect(await liveAudit(orgA)).toEqual(expected);

    // The audit rebuilt from the history: every entry, equal to the live one, swapped in.
    const report = await replayView('audit', options({ liveGroupId: `${prefix}-audit` }));
    expect(report).toMatchObject({
      view: 'audit',
      topics: [store.topics.accountsHistory],
      equal: true,
      swapped: true,
      organizations: { live: 2, rebuilt: 2 },
    });
    expect(report.events).toBe(history.length);
    expect(report.summary).toContain(`audit: rebuilt ${history.length} events of ${store.topics.accountsHistory}`);
    expect(await liveAudit(orgA)).toEqual(expected);
    expect((await liveAudit(orgB)).map((entry: AuditEntry) => entry.subject)).toEqual(
      (await writerView.audit(orgB, 500, 0)).entries.map((entry) => entry.subject),
    );

    // A lost audit (a Redis restored from an old copy, a bug): the replay tells, and a forced one brings it back.
    await redis.del(`${namespace}:{audit}:${orgA}`);
    const differing = await replayView('audit', options({ liveGroupId: `${prefix}-audit`, waitForLiveMs: 1000 }));
    expect(differing).toMatchObject({ equal: false, swapped: false, differenceCount: 1 });
    expect(differing.differences[0]).toMatchObject({
      organizationId: orgA,
      live: null,
      rebuilt: { count: expected.length },
    });
    const forced = await replayView('audit', options({ liveGroupId: `${prefix}-audit`, force: true }));
    expect(forced.swapped).toBe(true);
    expect(await liveAudit(orgA)).toEqual(expected);
  });
});

describe('the accounts archiver', () => {
  let store: EventStore;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    store = await freshEventStore('archiver-test');
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await deleteTopicsAndDisconnect(store);
  });

  it('killed (SIGKILL) while copying and restarted, loses no event of the history', async () => {
    const groupPrefix = uniqueName('archiver');
    const spawnArchiver = async () => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/projector/fixtures/archiverProcess.ts'], {
        env: { ...process.env, TEST_TOPICS: JSON.stringify(store.topics), TEST_GROUP_PREFIX: groupPrefix },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(child);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the archiver never started')), 45_000);
        createInterface({ input: child.stdout! }).on('line', (line) => {
          if (line === 'started') {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      return child;
    };
    const historyCount = async () => {
      const admin = store.kafka.admin();
      await admin.connect();
      try {
        const offsets = await admin.fetchTopicOffsets(store.topics.accountsHistory);
        return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
      } finally {
        await admin.disconnect();
      }
    };

    const victim = await spawnArchiver();
    const batch = () => Array.from({ length: 5 }, () => accountEvents(randomUUID())).flat() as StoredEvent[];
    // 75 organizations' events, appended in 15 appends while the archiver copies them.
    const appended: StoredEvent[] = [];
    const appending = (async () => {
      for (let round = 0; round < 15; round++) {
        const events = batch();
        await store.append(events);
        appended.push(...events);
      }
    })();
    // Killed once it has copied something, while the appends go on; 75 more organizations' while it is dead.
    await eventually(async () => ((await historyCount()) > 0 ? true : undefined), 45_000, 'a first copy');
    victim.kill('SIGKILL');
    await new Promise((resolve) => victim.once('exit', resolve));
    await appending;
    for (let round = 0; round < 15; round++) {
      const events = batch();
      await store.append(events);
      appended.push(...events);
    }
    expect(await historyCount()).toBeLessThan(appended.length);

    await spawnArchiver();
    const wanted = new Set(appended.map((event) => event.metadata.eventId));
    const copied = await eventually(
      async () => {
        const history = await readTopic(store, store.topics.accountsHistory);
        const ids = new Set(history.map((item) => item.event!.metadata.eventId));
        return [...wanted].every((id) => ids.has(id)) ? history : undefined;
      },
      60_000,
      'every event in the history',
    );
    // Nothing lost; what was copied twice (killed between its append and its commit) is the same record again,
    // byte for byte the one of the `accounts` topic, keyed by its organization.
    const ids = copied.map((item) => item.event!.metadata.eventId);
    expect(new Set(ids)).toEqual(wanted);
    const originals = new Map(
      (await readTopic(store, store.topics.accounts)).map((item) => [item.event!.metadata.eventId, item.message]),
    );
    for (const item of copied) {
      const original = originals.get(item.event!.metadata.eventId)!;
      expect(item.message.value!.equals(original.value!)).toBe(true);
      expect(item.position.key).toBe(item.event!.metadata.organizationId);
    }
    console.log(`archiver kill: ${appended.length} events, ${ids.length - wanted.size} copied twice, 0 lost`);
  });
});

describe('admin replay audit', () => {
  let store: EventStore;
  const prefix = uniqueName('test-audit-cli');

  beforeAll(async () => {
    store = new EventStore({
      brokers: addresses.kafkaBrokers,
      registryUrl: addresses.schemaRegistryUrl,
      clientId: 'audit-cli-test',
      topics: prefixedTopicNames(prefix),
    });
    await store.ensureTopics(topicConfigs(store.topics, 3));
  });
  afterAll(async () => {
    await deleteTopicsAndDisconnect(store);
  });

  it('rebuilds the audit from the history topic and says so; replay accounts says where the audit comes from', async () => {
    const events = [randomUUID(), randomUUID()].flatMap((org) => accountEvents(org)) as StoredEvent[];
    await store.append(events);
    const archiver = await startAccountsArchiver({ store, groupId: archiverGroupOf(uniqueName('archiver')) });
    try {
      await eventually(
        async () => ((await readTopic(store, store.topics.accountsHistory)).length >= events.length ? true : undefined),
        45_000,
        'the archiver to copy the events',
      );
    } finally {
      await archiver.stop();
    }

    // The command line on this test's topics (SENDLINE_TOPIC_PREFIX); a dry run swaps nothing. Exit 3 is the live
    // audit (other tests' organizations) differing from this history.
    const env = { SENDLINE_TOPIC_PREFIX: prefix };
    const audit = await admin(['replay', 'audit', '--dry-run', '--no-progress', '--json'], env, 120_000);
    expect([0, 3], audit.stderr).toContain(audit.code);
    const report = audit.json<ReplayReport>();
    expect(report).toMatchObject({
      view: 'audit',
      topics: [store.topics.accountsHistory],
      events: events.length,
      swapped: false,
      organizations: { rebuilt: 2 },
    });
    expect(report.summary).toMatch(
      new RegExp(
        `^audit: rebuilt ${events.length} events of ${store.topics.accountsHistory.replace(/\./g, '\\.')} in `,
      ),
    );

    const accounts = await admin(['replay', 'accounts', '--dry-run', '--no-progress', '--json'], env, 120_000);
    expect([0, 3], accounts.stderr).toContain(accounts.code);
    expect(accounts.json<ReplayReport>().summary).toContain(
      `The audit is not part of it: \`replay audit\` rebuilds it from ${store.topics.accountsHistory}.`,
    );
  });
});
