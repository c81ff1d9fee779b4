import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { AllowanceCounter, createRedis, serviceAddresses, ViewBatch, type Redis } from '@sendline/infra';

const addresses = serviceAddresses();
const clients: Redis[] = [];
afterAll(() => clients.forEach((client) => client.disconnect()));

describe("a new Redis client's first view write", () => {
  it('shares a tick with other commands on the client: every command answers, and nothing is thrown outside them', async () => {
    // ioredis copies a client's Lua commands into an auto-pipeline when it creates the pipeline: a command defined
    // lazily, in a tick whose pipeline already existed, failed and left that pipeline throwing an uncaught
    // TypeError that killed the projector. createRedis defines them when the client is made.
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', record);
    try {
      const redis = createRedis(addresses.redisUrl);
      clients.push(redis);
      await redis.ping();
      const ns = `test-${randomUUID()}`;
      const read = redis.get(`${ns}:anything`);
      // A view's keys share its hash tag (one slot on a Redis Cluster), as the projector's do.
      const write = new ViewBatch(`${ns}:positions:{view}`)
        .at('0')
        .hset(`${ns}:{view}:data`, 'field', 'value')
        .apply(redis, { topic: 'email.messages', partition: 0, from: null, to: '0' });
      const used = new AllowanceCounter(redis, ns).used(randomUUID(), '2026-11');
      await expect(Promise.all([read, write, used])).resolves.toEqual([null, 0n, 0]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await redis.hget(`${ns}:{view}:data`, 'field')).toBe('value');
      await redis.del(`${ns}:{view}:data`, `${ns}:positions:{view}`);
    } finally {
      process.off('uncaughtException', record);
    }
    expect(uncaught).toEqual([]);
  });
});
