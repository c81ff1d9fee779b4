import { replayView, type ReplayableView } from '@sendline/application';
import { createClickHouse, type ClickHouseClient } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivateStack, type PrivateStack } from '../support/privateStack';
import { keyedLoad, sleep, summarize, waitUntil } from './harness';
import { startPipeline, type Pipeline } from './pipeline';

/**
 * The projector killed (SIGKILL) while messages flow and hard bounces add suppressions, then started again:
 * every view it builds (suppressions, accounts and the allowance in Redis, the activity store in ClickHouse) equals a
 * replay of its topics — nothing it had committed past was lost, and nothing applied twice shows.
 */

let stack: PrivateStack;
let pipeline: Pipeline;
let clickhouse: ClickHouseClient;

beforeAll(async () => {
  stack = await startPrivateStack({ name: 'chaos-projector' });
  pipeline = await startPipeline(stack.addresses);
  clickhouse = createClickHouse(stack.addresses.clickhouseUrl);
});

afterAll(async () => {
  await clickhouse?.close();
  await pipeline?.close();
  await stack?.stop();
});

describe('the projector killed under load', () => {
  it('leaves every view equal to a replay of its topics', async () => {
    const count = 300;
    const loading = keyedLoad({
      baseUrl: pipeline.baseUrl,
      apiKey: pipeline.org.liveKey,
      count,
      ratePerSecond: 50,
      // One message in five hard-bounces: the suppression view changes under the kill too.
      message: (i) => ({ ...pipeline.message(i), ...(i % 5 === 0 ? { To: `hardbounce-${i}@example.net` } : {}) }),
      retryForMs: 30_000,
    });
    await sleep(2500);
    await pipeline.projector.kill('SIGKILL');
    const killedAt = Date.now();
    await sleep(2000);
    pipeline.projector.start();
    const sends = await loading;
    const summary = summarize(sends);
    expect(summary.unanswered).toBe(0);

    // Every hard bounce is suppressed (the sender writes the view at once; the projector rebuilds it too).
    const bounced = sends.filter((_, i) => i % 5 === 0).length;
    await waitUntil(
      async () => (await pipeline.redis.hlen(`sl:{suppressions}:${pipeline.org.organizationId}`)) === bounced,
      120_000,
      'every hard bounce to be suppressed',
    );
    // The activity store shows every message delivered or bounced.
    const reports: Record<string, { equal: boolean; events: number; differenceCount: number; ms: number }> = {};
    const views: ReplayableView[] = ['suppressions', 'accounts', 'allowance', 'activity'];
    await waitUntil(
      async () => {
        for (const view of views) {
          const started = Date.now();
          const report = await replayView(view, {
            store: pipeline.store,
            redis: pipeline.redis,
            clickhouse,
            database: stack.addresses.clickhouseDatabase,
            dryRun: true,
            waitForLiveMs: 60_000,
          });
          reports[view] = {
            equal: report.equal,
            events: report.events,
            differenceCount: report.differenceCount,
            ms: Date.now() - started,
          };
        }
        return views.every((view) => reports[view]!.equal);
      },
      180_000,
      'every view to equal its replay',
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${JSON.stringify(reports)}`);
    });
    console.log(
      'chaos projector:',
      JSON.stringify({ ...summary, bounced, viewsEqualAfterKillMs: Date.now() - killedAt, views: reports }),
    );
    for (const view of views) expect(reports[view]!.equal, view).toBe(true);
    // The allowance equals the log: one recipient per accepted message, each counted once.
    expect(await pipeline.allowanceUsed()).toBe(sends.filter((send) => send.messageId).length);
  });
});
