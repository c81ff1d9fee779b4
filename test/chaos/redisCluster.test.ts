import { replayView, type ReplayableView } from '@sendline/application';
import { SuppressionView } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivateStack, type PrivateStack } from '../support/privateStack';
import { keyedLoad, sleep, summarize, waitUntil } from './harness';
import { startPipeline, type Pipeline } from './pipeline';

/**
 * Redis as a cluster (issue 38, §2): a private Redis Cluster of three masters with one replica each
 * (`infra up --redis-cluster`), on a private Kafka. The API, the sender and the projector on the cluster, under a
 * keyed load with hard bounces: the master that holds the suppression view is killed with SIGKILL, its replica takes
 * over, and the old master comes back as a replica. Counted: every accepted message delivered once (none twice),
 * every hard bounce suppressed, the Redis views equal to a replay, the allowance equal to the log.
 *
 * The rest of the cluster's coverage is the whole integration suite: `npm test` runs it against a Redis Cluster of
 * its own (infra/local/bin/test, test_redis_cluster), and the fault tests, this one aside, against the single Redis.
 */

let stack: PrivateStack;
let pipeline: Pipeline | undefined;

beforeAll(async () => {
  stack = await startPrivateStack({ name: 'chaos-redis-cluster', redisCluster: true });
});

afterAll(async () => {
  await pipeline?.close();
  await stack?.stop();
});

describe('a Redis Cluster of three masters', () => {
  it('fails a master over to its replica under load: no suppression lost, no message sent twice', async () => {
    pipeline = await startPipeline(stack.addresses);
    const { redis } = pipeline;
    const suppressionsKey = `sl:{suppressions}:${pipeline.org.organizationId}`;
    /** The node (1-6) serving a key's slot as master, from the cluster's own map. */
    const masterOf = async (key: string): Promise<number> => {
      const slot = Number(await redis.call('CLUSTER', 'KEYSLOT', key));
      const ranges = (await redis.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]]][];
      const range = ranges.find(([from, to]) => slot >= from && slot <= to);
      if (!range) throw new Error(`no master serves slot ${slot}`);
      const port = Number(range[2][1]);
      const node = [1, 2, 3, 4, 5, 6].find((n) => stack.redisNodePort(n) === port);
      if (!node) throw new Error(`slot ${slot} is served by port ${port}, not one of the stack's nodes`);
      return node;
    };

    const count = 300;
    const loading = keyedLoad({
      baseUrl: pipeline.baseUrl,
      apiKey: pipeline.org.liveKey,
      count,
      ratePerSecond: 50,
      // One message in five hard-bounces: the suppression view changes while its master dies.
      message: (i) => ({ ...pipeline!.message(i), ...(i % 5 === 0 ? { To: `hardbounce-${i}@example.net` } : {}) }),
      retryForMs: 30_000,
    });
    await sleep(3000);
    const killed = await masterOf(suppressionsKey);
    await stack.kill(`redis-${killed}`);
    const killedAt = Date.now();
    // The replica is promoted once the others agree the master is gone (cluster-node-timeout 3 s).
    await waitUntil(
      async () => (await masterOf(suppressionsKey).catch(() => killed)) !== killed,
      60_000,
      'the replica to take over the suppression view',
    );
    const failedOverMs = Date.now() - killedAt;
    const promoted = await masterOf(suppressionsKey);
    // The old master comes back on its data and joins as the new master's replica.
    await stack.start(`redis-${killed}`);
    const sends = await loading;
    const summary = summarize(sends);
    /** Each second from the kill: how many answers of each status. */
    const timeline: Record<string, Record<number, number>> = {};
    for (const answer of sends.flatMap((send) => send.answers)) {
      const second = String(Math.floor((answer.at - killedAt) / 1000));
      (timeline[second] ??= {})[answer.status] = (timeline[second]?.[answer.status] ?? 0) + 1;
    }
    const errors = [...new Set(pipeline.api.ownOutput.match(/"message":"[^"]{0,120}"/g) ?? [])].slice(0, 20);
    expect(summary.unanswered, JSON.stringify({ summary, failedOverMs, timeline, errors })).toBe(0);
    const accepted = sends.filter((send) => send.messageId).map((send) => send.messageId!);

    // Every hard bounce is suppressed, every other message delivered: none lost, none twice.
    const bounced = sends.filter((send, i) => i % 5 === 0 && send.messageId).length;
    await waitUntil(
      async () => (await redis.hlen(suppressionsKey)) === bounced,
      120_000,
      'every hard bounce suppressed',
    );
    const delivered = accepted.filter((_, i) => i % 5 !== 0);
    await waitUntil(
      async () => pipeline!.undelivered(delivered).length === 0,
      120_000,
      'every message delivered',
    ).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${await pipeline!.explainUndelivered(pipeline!.undelivered(delivered))}`);
    });
    const twice = [...pipeline.deliveriesByMessageId()].filter(([, times]) => times > 1);

    const reports: Record<string, { equal: boolean; events: number; differenceCount: number; differences: unknown[] }> =
      {};
    // Every suppression the log holds is in the live view, and nothing else: the addresses of the organization's
    // SuppressionAdded events (none is deleted here), against the view's.
    const logged = new Map<string, number>();
    await pipeline.store.readAll([pipeline.store.topics.suppressions], async (items) => {
      for (const { event } of items) {
        if (event?.type !== 'SuppressionAdded' || event.metadata.organizationId !== pipeline!.org.organizationId)
          continue;
        const { emailAddress, createdAt } = event.data as { emailAddress: string; createdAt: number };
        if (!logged.has(emailAddress.toLowerCase())) logged.set(emailAddress.toLowerCase(), createdAt);
      }
    });
    const live = await new SuppressionView(redis).list(pipeline.org.organizationId);
    expect(live.map((entry) => entry.emailAddress).sort()).toEqual([...logged.keys()].sort());
    // A bounce's suppression the sender appended twice (its first append answered late while Redis failed over) may
    // show the second one's time in the live view (the sender writes it at once, first) where a replay keeps the
    // first event's: the same address, suppressed for the same reason, seconds apart. Counted, not a loss.
    const otherTime = live.filter((entry) => logged.get(entry.emailAddress) !== entry.createdAt).length;

    const views: ReplayableView[] = ['suppressions', 'accounts', 'allowance'];
    // The suppression view is compared by its replay only when no suppression was appended twice (see otherTime).
    const compared = otherTime === 0 ? views : views.filter((view) => view !== 'suppressions');
    await waitUntil(
      async () => {
        for (const view of compared) {
          const report = await replayView(view, {
            store: pipeline!.store,
            redis,
            dryRun: true,
            waitForLiveMs: 60_000,
          });
          reports[view] = {
            equal: report.equal,
            events: report.events,
            differenceCount: report.differenceCount,
            differences: report.differences.slice(0, 3),
          };
        }
        return compared.every((view) => reports[view]!.equal);
      },
      180_000,
      'every Redis view to equal its replay',
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${JSON.stringify(reports)}`);
    });
    const roles = await stack.infra('status');
    console.log(
      'redis cluster failover:',
      JSON.stringify({
        ...summary,
        accepted: accepted.length,
        bounced,
        deliveredTwice: twice.length,
        suppressed: live.length,
        suppressionsWithTheSecondAppendsTime: otherTime,
        killedNode: killed,
        promotedNode: promoted,
        failedOverMs,
        views: reports,
      }),
      `\n${roles
        .split('\n')
        .filter((line) => line.startsWith('redis'))
        .join('\n')}`,
    );
    expect(twice).toEqual([]);
    for (const view of compared) expect(reports[view]!.equal, view).toBe(true);
    // The allowance equals the log: one recipient per accepted message, each counted once.
    expect(await pipeline.allowanceUsed()).toBe(accepted.length);
  });
});
