import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

// kafkajs 2.2.4's request queue, as patches/kafkajs+2.2.4.patch leaves it (applied by `npm ci`'s postinstall).
// Unpatched, every connection that ever had an answer checked its queue every millisecond for ever
// (tulios/kafkajs#1556): CPU spent in every process that talks to Kafka, idle or not.
const require = createRequire(import.meta.url);
const RequestQueue = require('kafkajs/src/network/requestQueue') as new (options: object) => {
  pending: { send: () => void; expectResponse: boolean; correlationId: number }[];
  throttledUntil: number;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
  destroy(): void;
};

const silent = { debug: () => undefined, warn: () => undefined, error: () => undefined, info: () => undefined };
const queueOf = () =>
  new RequestQueue({
    maxInFlightRequests: null,
    requestTimeout: 30_000,
    clientId: 'test',
    broker: 'b',
    logger: silent,
  });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("kafkajs's request queue (patched)", () => {
  it('with nothing pending and no throttle, checks once and then waits for the next request', async () => {
    const queue = queueOf();
    let checks = 0;
    const check = queue.checkPendingRequests.bind(queue);
    queue.checkPendingRequests = () => {
      checks += 1;
      check();
    };
    queue.checkPendingRequests();
    await sleep(100);
    queue.destroy();
    expect(checks).toBe(1);
  });

  it('a request held back by a throttle is still sent when the throttle ends', async () => {
    const queue = queueOf();
    let sentAt = 0;
    const started = Date.now();
    queue.throttledUntil = started + 30;
    queue.pending.push({ send: () => (sentAt = Date.now()), expectResponse: true, correlationId: 1 });
    queue.scheduleCheckPendingRequests();
    await sleep(150);
    queue.destroy();
    expect(sentAt).toBeGreaterThanOrEqual(started + 30);
  });
});
