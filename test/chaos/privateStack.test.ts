import { connect } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startPrivateStack, type PrivateStack } from '../support/privateStack';

/**
 * The fault tests' plumbing: a private Redis (the other services shared) is killed, started again on its data,
 * and wiped at the end; the shared services are left alone.
 */

let stack: PrivateStack | undefined;

afterAll(async () => {
  await stack?.stop();
});

function answers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.write('PING\r\n');
      socket.once('data', (data) => {
        socket.destroy();
        resolve(data.toString().startsWith('+PONG'));
      });
    });
    socket.once('error', () => resolve(false));
  });
}

describe('a private stack', () => {
  it('runs its own Redis, which a test can kill and start again, and leaves nothing behind', async () => {
    const shared = process.env.REDIS_URL;
    stack = await startPrivateStack({ name: 'private-stack-test', services: ['redis'] });
    expect(stack.addresses.redisUrl).not.toBe(shared);
    expect(stack.env.KAFKA_BROKERS).toBe(process.env.KAFKA_BROKERS ?? '127.0.0.1:9092');
    expect(await answers(stack.addresses.redisUrl)).toBe(true);

    const pid = stack.pid('redis');
    expect(pid).toBeGreaterThan(0);
    await stack.kill('redis');
    expect(stack.pid('redis')).toBeUndefined();
    expect(await answers(stack.addresses.redisUrl)).toBe(false);

    await stack.start('redis');
    expect(await answers(stack.addresses.redisUrl)).toBe(true);
    expect(stack.pid('redis')).not.toBe(pid);

    await stack.stop();
    expect(await answers(stack.addresses.redisUrl)).toBe(false);
    if (shared) expect(await answers(shared)).toBe(true);
    stack = undefined;
  });
});
