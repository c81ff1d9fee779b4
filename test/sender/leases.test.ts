import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, type Redis } from '@sendline/infra';
import { MessageLeases } from '@sendline/sender';
import { addresses } from '../support/services';

/**
 * One run of a message at a time across the sender's copies (apps/sender/src/leases.ts, docs/scaling.md): a run
 * holds its messages' leases in Redis; another copy's run of any of them waits until they are given back or expire.
 */

let redis: Redis;
const group = `test-leases-${randomUUID().slice(0, 8)}`;

beforeAll(() => {
  redis = createRedis(addresses.redisUrl);
});
afterAll(() => redis?.disconnect());

describe('message leases across sender copies', () => {
  it('makes a second copy wait for the first copy’s run of the same message, and only for it', async () => {
    const one = new MessageLeases(redis, group, { retryDelayMs: 20 });
    const other = new MessageLeases(redis, group, { retryDelayMs: 20 });
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const first = await one.hold([a, b]);
    // Another message is not held up.
    await (await other.hold([c])).release();
    const events: string[] = [];
    const second = other.hold([b, c]).then((held) => {
      events.push('second holds');
      return held;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    events.push('first releases');
    await first.release();
    await (await second).release();
    expect(events).toEqual(['first releases', 'second holds']);
    // All or none: while waiting for b, the second run held nothing, so c was free all along.
    // One EXISTS a key: the three are in different slots of a Redis Cluster (a multi-key EXISTS names one slot).
    const held = await Promise.all([a, b, c].map((id) => redis.exists(other.keyOf(id))));
    expect(held).toEqual([0, 0, 0]);
  });

  it('lets the next run go once a killed copy’s lease expires', async () => {
    const next = new MessageLeases(redis, group, { retryDelayMs: 20 });
    const id = randomUUID();
    // What a copy killed mid-run leaves: its lease, no longer renewed, given back by no one.
    await redis.set(next.keyOf(id), 'a-killed-copy', 'PX', 300);
    const held = await next.hold([id]);
    expect(await redis.get(next.keyOf(id))).not.toBe('a-killed-copy');
    await held.release();
    expect(await redis.exists(next.keyOf(id))).toBe(0);
  });
});
