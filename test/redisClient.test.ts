import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedis, unavailableService, type Redis } from '@sendline/infra';

/**
 * The Redis client's answer deadline (infra/src/redis/client.ts): a Redis that does not answer fails a command
 * after the deadline (the API answers 503 then), but a stall of our own process is not taken for one.
 */
const clients: Redis[] = [];
afterAll(() => clients.forEach((client) => client.disconnect()));

/** Waits until the client has written a command and waits for its answer (the command is in its queue of sent ones). */
const written = async (redis: Redis) => {
  const sent = () => (redis as unknown as { commandQueue: { length: number } }).commandQueue.length > 0;
  while (!sent()) await new Promise((resolve) => setImmediate(resolve));
};

/**
 * A Redis-speaking server on its own thread (so it answers while this thread is stalled): it answers INFO (the
 * client's ready check) and every other command at once, and raises `answered` once its answer to GET is written to
 * the socket. This thread's stall then lasts until the answer is there and the deadline has passed: conditions, not
 * times, so a loaded machine cannot make the answer come after the stall.
 */
async function answeringServer(): Promise<{ port: number; answered: Int32Array; close: () => Promise<number> }> {
  const answered = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `
    const { createServer } = require('node:net');
    const { parentPort, workerData } = require('node:worker_threads');
    const flag = workerData;
    const server = createServer((socket) => {
      let buffer = '';
      socket.on('data', (data) => {
        buffer += data.toString('latin1');
        for (;;) {
          // One RESP array of bulk strings: *<n>, then <n> times $<len> and the string.
          const lines = buffer.split('\\r\\n');
          if (!lines[0].startsWith('*')) return;
          const n = Number(lines[0].slice(1));
          if (lines.length < 1 + 2 * n + 1) return;
          const words = [];
          for (let i = 0; i < n; i++) words.push(lines[2 + 2 * i]);
          buffer = lines.slice(1 + 2 * n).join('\\r\\n');
          const name = words[0].toUpperCase();
          if (name === 'INFO') {
            const info = '# Server\\r\\nloading:0\\r\\n';
            socket.write('$' + info.length + '\\r\\n' + info + '\\r\\n');
          } else if (name === 'GET') {
            socket.write('$8\\r\\nanswered\\r\\n', () => {
              Atomics.store(flag, 0, 1);
            });
          } else {
            socket.write('+OK\\r\\n');
          }
        }
      });
    });
    server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
    `,
    { eval: true, workerData: answered },
  );
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return { port, answered, close: () => worker.terminate() };
}

describe('the Redis client answer deadline', () => {
  it('reads an answer that arrived while this process was stalled past the deadline, instead of failing the command', async () => {
    const server = await answeringServer();
    try {
      const redis = createRedis(`redis://127.0.0.1:${server.port}`, { commandTimeoutMs: 300 });
      clients.push(redis);
      await redis.ping();
      const sentAt = Date.now();
      const answer = redis.get('probe');
      await written(redis);
      // Stalled until the answer waits, unread, in the socket, and past the deadline: its timer is due first.
      while (Atomics.load(server.answered, 0) === 0 || Date.now() - sentAt < 300 + 200) {
        // busy, as a long GC pause or a starved CPU
      }
      await expect(answer).resolves.toBe('answered');
    } finally {
      await server.close();
    }
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
