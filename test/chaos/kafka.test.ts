import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivateStack, type PrivateStack } from '../support/privateStack';
import { errorAnswersOf, keyedLoad, sleep, summarize, waitUntil } from './harness';
import { startPipeline, type Pipeline } from './pipeline';

/**
 * The first row of issue 11's table: the only Kafka broker killed (SIGKILL) while keyed sends arrive, started
 * again the way the README says (`npm run infra -- up`), and every send that got a 503 retried with the same
 * Idempotency-Key. Before MessageIDs were derived from the key, 45 of 92 such retries were delivered twice
 * (the first attempt's event landed once the broker was back) and the allowance was refunded for sends that
 * did land. Now: nothing accepted is lost, nothing is delivered twice, the allowance equals the log, and
 * every error answer is a Postmark-style 503.
 */

let stack: PrivateStack;
let pipeline: Pipeline;

beforeAll(async () => {
  stack = await startPrivateStack({ name: 'chaos-kafka' });
  pipeline = await startPipeline(stack.addresses);
});

afterAll(async () => {
  await pipeline?.close();
  await stack?.stop();
});

describe('Kafka killed during keyed sends', () => {
  it('loses nothing accepted, delivers nothing twice, and the allowance equals the log', async () => {
    const count = 200;
    const ratePerSecond = 20;
    const loading = keyedLoad({
      baseUrl: pipeline.baseUrl,
      apiKey: pipeline.org.liveKey,
      count,
      ratePerSecond,
      message: (i) => pipeline.message(i),
      retryForMs: 90_000,
      retryDelayMs: 1000,
    });
    await sleep(3000);
    const killedAt = Date.now();
    await stack.kill('kafka');
    await sleep(5000);
    await stack.start('kafka');
    const restartedAt = Date.now();
    const sends = await loading;
    const summary = summarize(sends);

    // Every send was finally accepted, each under one MessageID of its own.
    expect(summary.unanswered, JSON.stringify(summary)).toBe(0);
    expect(summary.distinctMessageIds).toBe(count);

    // Each accepted message reaches the mail server once.
    const expected = new Set(sends.map((send) => send.messageId!));
    await waitUntil(
      () => pipeline.undelivered(expected).length === 0,
      120_000,
      () =>
        `every accepted message to be delivered (${pipeline.undelivered(expected).length} of ${expected.size} not yet)`,
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await pipeline.explainUndelivered(expected)}`);
    });
    await sleep(3000); // a late second copy would arrive now
    const deliveries = pipeline.deliveriesByMessageId();
    const lost = [...expected].filter((id) => !deliveries.has(id));
    const twice = [...deliveries.entries()].filter(([, n]) => n > 1);
    const unexpected = [...deliveries.keys()].filter((id) => !expected.has(id));

    // The log may hold a message's MessageAccepted more than once (a retry of a send that had landed): the same id.
    const accepted = await pipeline.acceptedEvents();
    const firstOfEach = new Map<string, (typeof accepted)[number]>();
    for (const event of accepted) {
      const id = (event.data as { messageId: string }).messageId;
      if (!firstOfEach.has(id)) firstOfEach.set(id, event);
    }
    const logUsage = [...firstOfEach.values()].reduce(
      (sum, event) => sum + (event.data as { activeRecipients: string[] }).activeRecipients.length,
      0,
    );
    await waitUntil(
      async () => (await pipeline.allowanceUsed()) === logUsage,
      30_000,
      'the allowance to match the log',
    );

    const errors = errorAnswersOf(sends);
    console.log(
      'chaos kafka:',
      JSON.stringify({
        ...summary,
        killedForMs: restartedAt - killedAt,
        acceptedEventsInLog: accepted.length,
        distinctMessagesInLog: firstOfEach.size,
        lost: lost.length,
        deliveredTwice: twice.length,
        unexpected: unexpected.length,
        allowanceUsed: logUsage,
      }),
    );
    expect(lost).toEqual([]);
    expect(twice).toEqual([]);
    expect(unexpected).toEqual([]);
    expect(firstOfEach.size).toBe(count);
    for (const answer of errors) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(503);
      expect(answer.body).toMatchObject({ ErrorCode: expect.any(Number), Message: expect.any(String) });
      expect(answer.retryAfter).toBeGreaterThan(0);
    }
    // Not a 500 and not a transport failure: the API stayed up and answered.
    expect(summary.transportFailures).toEqual({});
  });
});
