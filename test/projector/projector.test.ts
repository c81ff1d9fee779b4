import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldOrganization, type MessageEvent } from '@sendline/domain';
import { ProjectorMetrics, serveMetrics, startProjector, type RunningProjector } from '@sendline/projector';
import {
  AccountsView,
  activityFingerprints,
  ClickHouseActivityReader,
  ClickHouseActivityWriter,
  createRedis,
  SuppressionView,
  type ClickHouseClient,
  type EventStore,
  type Redis,
  type StoredEvent,
  deleteKeys,
  committedOffsets,
} from '@sendline/infra';
import { deleteTopicsAndDisconnect, eventually, freshEventStore, uniqueName } from '../support/services';
import {
  accountEvents,
  expectedStatus,
  freshActivityDatabase,
  lifecycle,
  suppressionAdded,
  suppressionDeleted,
} from './support';

describe('the projector', () => {
  let store: EventStore;
  let redis: Redis;
  let client: ClickHouseClient;
  let database: string;
  let dropDatabase: () => Promise<void>;
  const namespace = uniqueName('test-projector');
  const running: RunningProjector[] = [];
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    store = await freshEventStore('projector-test');
    redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    ({ client, database, drop: dropDatabase } = await freshActivityDatabase('test_projector'));
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const projector of running) await projector.stop();
    await deleteKeys(redis, `${namespace}:*`);
    redis.disconnect();
    await dropDatabase();
    await deleteTopicsAndDisconnect(store);
  });

  const start = async (groupPrefix: string, options: Partial<Parameters<typeof startProjector>[0]> = {}) => {
    const projector = await startProjector({
      store,
      redis,
      clickhouse: client,
      database,
      namespace,
      groupPrefix,
      retention: false,
      sessionTimeoutMs: 6000,
      writer: { maxDelayMs: 50 },
      ...options,
    });
    running.push(projector);
    return projector;
  };
  const stop = async (projector: RunningProjector) => {
    await projector.stop();
    running.splice(running.indexOf(projector), 1);
  };

  /** The activity store a single writer builds from the events, in order, in one pass: what the projector must converge to. */
  async function referenceFingerprints(events: MessageEvent[], organizationId: string) {
    const reference = await freshActivityDatabase('test_reference');
    try {
      const writer = new ClickHouseActivityWriter(reference.client, reference.database, {
        maxEvents: 100_000,
        maxDelayMs: 10,
      });
      await writer.write(events.map((event) => ({ event })));
      await writer.close();
      return (await activityFingerprints(reference.client, reference.database)).get(organizationId);
    } finally {
      await reference.drop();
    }
  }
  const liveFingerprint = async (organizationId: string) =>
    (await activityFingerprints(client, database)).get(organizationId);

  it('keeps each view equal to what its events say', async () => {
    const org = randomUUID();
    const accounts = accountEvents(org);
    const suppressions = [
      suppressionAdded(org, 'Gone@Example.net'),
      suppressionAdded(org, 'kept@example.net'),
      suppressionDeleted(org, 'gone@example.net'),
    ];
    const messages = [0, 1, 2, 3, 4].flatMap((n) => lifecycle(org, n));
    await store.append([...accounts, ...suppressions, ...messages] as StoredEvent[]);
    const projector = await start(uniqueName('projector'));

    const accountsView = new AccountsView(redis, namespace);
    const expectedAccount = foldOrganization(accounts);
    await eventually(
      async () => {
        const state = await accountsView.organizationState(org);
        return state.allowance === 1000 ? state : undefined;
      },
      30_000,
      'the accounts view',
    );
    expect(await accountsView.organizationState(org)).toEqual(expectedAccount);

    const suppressionView = new SuppressionView(redis, namespace);
    await eventually(
      async () => ((await suppressionView.list(org)).length === 1 ? true : undefined),
      30_000,
      'suppressions',
    );
    expect(await suppressionView.list(org)).toEqual([
      {
        emailAddress: 'kept@example.net',
        reason: 'ManualSuppression',
        origin: 'Customer',
        createdAt: (suppressions[1]!.data as { createdAt: number }).createdAt,
      },
    ]);

    const reader = new ClickHouseActivityReader(client, database);
    await eventually(
      async () => ((await reader.list(org, { count: 50, offset: 0 })).total === 5 ? true : undefined),
      30_000,
      'activity',
    );
    const byMessage = new Map<string, MessageEvent[]>();
    for (const event of messages)
      byMessage.set(event.data.messageId, [...(byMessage.get(event.data.messageId) ?? []), event]);
    await eventually(
      async () => {
        for (const [messageId, events] of byMessage) {
          if ((await reader.details(org, messageId))?.status !== expectedStatus(events)) return undefined;
        }
        return true;
      },
      30_000,
      'every message in its final status',
    );
    expect(await liveFingerprint(org)).toEqual(await referenceFingerprints(messages, org));
    await stop(projector);
  });

  it('converges after being stopped mid-stream and restarted with the same group, duplicates included', async () => {
    const org = randomUUID();
    const prefix = uniqueName('projector');
    const events = Array.from({ length: 300 }, (_, n) => lifecycle(org, n)).flat();
    const half = Math.floor(events.length / 2);
    for (let i = 0; i < half; i += 50) await store.append(events.slice(i, Math.min(i + 50, half)) as StoredEvent[]);
    const first = await start(prefix);
    const reader = new ClickHouseActivityReader(client, database);
    await eventually(
      async () => ((await reader.list(org, { count: 1, offset: 0 })).total > 0 ? true : undefined),
      30_000,
      'a first batch',
    );
    await stop(first);
    // It committed what it wrote: the restart resumes there rather than from the beginning.
    const committed = await committedOffsets(store, `${prefix}-activity`, [store.topics.messages]);
    expect([...(committed ?? new Map()).values()].some((offset) => offset > 0n)).toBe(true);
    // The rest, and some events a second time (an at-least-once writer upstream).
    await store.append(events.slice(half) as StoredEvent[]);
    await store.append(events.slice(half - 40, half + 40) as StoredEvent[]);
    const second = await start(prefix);
    const expected = await referenceFingerprints(events, org);
    await eventually(
      async () => {
        const print = await liveFingerprint(org);
        return print?.checksum === expected?.checksum ? print : undefined;
      },
      45_000,
      'the restarted projector to converge',
    );
    expect(await liveFingerprint(org)).toEqual(expected);
    await stop(second);
  });

  it('converges after being killed (SIGKILL) between a write and its commit, and restarted', async () => {
    const org = randomUUID();
    const prefix = uniqueName('projector');
    const events = Array.from({ length: 600 }, (_, n) => lifecycle(org, n)).flat();
    for (let i = 0; i < events.length; i += 200) await store.append(events.slice(i, i + 200) as StoredEvent[]);
    const spawnProjector = () => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/projector/fixtures/projectorProcess.ts'], {
        env: {
          ...process.env,
          TEST_TOPICS: JSON.stringify(store.topics),
          TEST_DATABASE: database,
          TEST_NAMESPACE: namespace,
          TEST_GROUP_PREFIX: prefix,
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(child);
      return child;
    };
    const victim = spawnProjector();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the projector never flushed')), 45_000);
      createInterface({ input: victim.stdout! }).on('line', (line) => {
        if (line.startsWith('flushed ')) {
          clearTimeout(timer);
          victim.kill('SIGKILL');
          resolve();
        }
      });
    });
    await new Promise((resolve) => victim.once('exit', resolve));
    const expected = await referenceFingerprints(events, org);
    expect((await liveFingerprint(org))?.checksum).not.toBe(expected?.checksum);

    spawnProjector();
    await eventually(
      async () => {
        const print = await liveFingerprint(org);
        return print?.checksum === expected?.checksum ? print : undefined;
      },
      60_000,
      'the restarted projector to converge',
    );
    expect(await liveFingerprint(org)).toEqual(expected);
  });

  it('exports its lag per partition as a Prometheus gauge', async () => {
    const prefix = uniqueName('projector');
    const metrics = new ProjectorMetrics();
    const projector = await start(prefix, { projections: ['suppressions'], metrics });
    const org = randomUUID();
    await store.append([suppressionAdded(org, 'a@example.net')]);
    await eventually(
      async () => ((await new SuppressionView(redis, namespace).list(org)).length === 1 ? true : undefined),
      30_000,
      'the first suppression',
    );
    await eventually(
      async () => ((await projector.refreshLag()).every((lag) => lag.lag === 0) ? true : undefined),
      20_000,
      'no lag',
    );
    await stop(projector);
    // Stopped: seven events wait.
    await store.append(Array.from({ length: 7 }, (_, i) => suppressionAdded(org, `lag${i}@example.net`)));
    const lags = await projector.refreshLag();
    expect(lags.reduce((sum, lag) => sum + lag.lag, 0)).toBe(7);
    expect(new Set(lags.map((lag) => lag.partition)).size).toBe(3);

    const server = await serveMetrics(metrics.registry, 0);
    try {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      expect(address).toMatchObject({ address: '127.0.0.1' });
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const samples = [...text.matchAll(/^sendline_projector_lag\{([^}]*)\} (\d+)$/gm)];
      expect(samples.length).toBe(3);
      for (const [, labels] of samples) {
        expect(labels).toContain('projection="suppressions"');
        expect(labels).toContain(`topic="${store.topics.suppressions}"`);
        expect(labels).toMatch(/partition="\d"/);
      }
      expect(samples.reduce((sum, [, , value]) => sum + Number(value), 0)).toBe(7);
      expect(text).toMatch(/^sendline_projector_events_total\{projection="suppressions"\} [1-9]/m);
    } finally {
      server.close();
    }
  });
});
