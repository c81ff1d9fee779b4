import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, WebhookDeliveryLog, type Redis, type WebhookDeliveryAttempt } from '@sendline/infra';
import { addresses } from '../support/services';

/**
 * One copy at a time makes an attempt of a webhook call (WebhookDeliveryLog.claim, docs/scaling.md): two copies of
 * the webhooks app that read the same call record (a rebalance mid-batch) never both call; the second finds what
 * the first did once its lease is given back. On the real Redis.
 */

let redis: Redis;
let log: WebhookDeliveryLog;
const organizationId = `org-claims-${randomUUID().slice(0, 8)}`;

beforeAll(() => {
  redis = createRedis(addresses.redisUrl);
  log = new WebhookDeliveryLog(redis);
});
afterAll(() => redis?.disconnect());

const delivered = (callId: string): WebhookDeliveryAttempt => ({
  callId,
  webhookId: 1,
  recordType: 'Delivery',
  attempt: 1,
  manual: false,
  status: 'Delivered',
  httpStatus: 200,
  latencyMs: 3,
  answer: 'ok',
  at: Date.now(),
});

describe('webhook call claims across copies', () => {
  it('makes the second copy wait while the first calls, then tells it the call was answered', async () => {
    const callId = randomUUID();
    const first = await log.claim(callId, 1, { retryDelayMs: 20 });
    if (typeof first === 'string') throw new Error(`the first copy could not claim the call: ${first}`);
    const events: string[] = [];
    const second = log.claim(callId, 1, { retryDelayMs: 20 }).then((claim) => {
      events.push(`second: ${typeof claim === 'string' ? claim : 'claimed'}`);
      return claim;
    });
    // The first copy's call is answered 2xx: it records the answer, whose mark replaces its lease.
    await new Promise((resolve) => setTimeout(resolve, 200));
    events.push('first answered');
    await log.record(organizationId, delivered(callId), true);
    first.answered();
    expect(await second).toBe('answered');
    expect(events).toEqual(['first answered', 'second: answered']);
    expect(await log.answered(callId)).toBe(true);
    expect(await log.answeredAmong([callId, randomUUID()])).toEqual(new Set([callId]));
  });

  it('does not make an attempt again once it ended unanswered, and lets the next attempt go', async () => {
    const callId = randomUUID();
    const first = await log.claim(callId, 1);
    if (typeof first === 'string') throw new Error(`the first copy could not claim the call: ${first}`);
    // Failed: its next attempt was scheduled, so attempt 1 has ended.
    await first.settle();
    expect(await log.claim(callId, 1)).toBe('settled');
    // Ended unanswered is not answered: the batch read does not skip it, and the call's next attempt is made.
    expect(await log.answeredAmong([callId])).toEqual(new Set());
    const next = await log.claim(callId, 2);
    expect(typeof next).toBe('object');
    if (typeof next !== 'string') await next.release();
  });

  it('lets an attempt given back (it threw before its outcome was known) be made again', async () => {
    const callId = randomUUID();
    const first = await log.claim(callId, 1);
    if (typeof first === 'string') throw new Error(`the first copy could not claim the call: ${first}`);
    await first.release();
    const again = await log.claim(callId, 1);
    expect(typeof again).toBe('object');
    if (typeof again !== 'string') await again.release();
  });

  it('lets the call be made once a killed copy’s lease expires', async () => {
    const callId = randomUUID();
    const key = `sl:webhooks:answered:${callId}`;
    // What a copy killed mid-call leaves: its lease, no longer renewed, given back by no one.
    await redis.set(key, 'calling:a-killed-copy', 'PX', 300);
    const claim = await log.claim(callId, 1, { retryDelayMs: 20 });
    expect(typeof claim).toBe('object');
    expect(await redis.get(key)).toMatch(/^calling:/);
    expect(await redis.get(key)).not.toBe('calling:a-killed-copy');
    if (typeof claim !== 'string') await claim.release();
    expect(await redis.exists(key)).toBe(0);
  });
});
