import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { Cluster } from 'ioredis';
import { createRedis, isCluster, serviceAddresses, unavailableService, type Redis } from '@sendline/infra';

/**
 * The Redis client's answer deadline (infra/src/redis/client.ts): a Redis that does not answer fails a command
 * after the deadline (the API answers 503 then), but a stall of our own process is not taken for one.
 */
const addresses = serviceAddresses();
const clients: Redis[] = [];
afterAll(() => clients.forEach((client) => client.disconnect()));

/** Keeps this process's event loop busy for `ms`, as a long GC pause or a starved CPU does. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

/** A script that keeps Redis busy for 50 ms, then answers. */
const ANSWER_AFTER_50_MS = `
local function now() local t = redis.call('TIME') return t[1] * 1000000 + t[2] end
local started = now()
repeat until now() - started > 50000
return 'answered'`;

/**
 * Waits until the client has written a command to Redis and waits for its answer (the command is in a connection's
 * queue of commands sent), and no more: the answer is not read yet when the stall begins (Redis answers 50 ms after
 * the write). A condition, not a count of event-loop turns: a Redis Cluster's client picks the node first, and a
 * loaded machine took more turns than any count (the command was written after the stall, and timed out).
 */
const written = async (redis: Redis) => {
  const connections = isCluster(redis) ? (redis as unknown as Cluster).nodes('all') : [redis];
  const sent = () =>
    connections.some((c) => (c as unknown as { commandQueue: { length: number } }).commandQueue.length > 0);
  while (!sent()) await new Promise((resolve) => setImmediate(resolve));
};

describe('the Redis client answer deadline', () => {
  it('reads an answer that arrived while this process was stalled past the deadline, instead of failing the command', async () => {
    const redis = createRedis(addresses.redisUrl, { commandTimeoutMs: 300 });
    clients.push(redis);
    await redis.ping();
    // Once before: a Redis Cluster's client connects to a node when a command first goes there.
    await redis.eval(ANSWER_AFTER_50_MS, 0);
    // Redis answers 50 ms after the command is written: while this process is stalled for a second.
    const answer = redis.eval(ANSWER_AFTER_50_MS, 0);
    await written(redis);
    stall(1000);
    await expect(answer).resolves.toBe('answered');
  });

  it('fails a command that gets no answer within the deadline, as Redis being unavailable', async () => {
    // A server that takes the connection and never answers: a hung Redis.
    const sockets: Socket[] = [];
    const hung = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    try {
      const redis = createRedis(`redis://127.0.0.1:${(hung.address() as AddressInfo).port}`, { commandTimeoutMs: 300 });
      clients.push(redis);
      const failure = await redis.get('anything').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(Error);
      expect((failure as Error).message).toBe('Command timed out');
      expect(unavailableService(failure)).toBe('redis');
    } finally {
      sockets.forEach((socket) => socket.destroy());
      hung.close();
    }
  });
});
