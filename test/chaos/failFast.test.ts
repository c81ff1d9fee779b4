import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApi, connectApiDependencies, type Api } from '@sendline/api';
import type { SuppressionEvent } from '@sendline/domain';
import {
  createRedis,
  deadLetterTopicOf,
  SuppressionView,
  type ServiceAddresses,
  type StoredEvent,
} from '@sendline/infra';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrganization, type TestOrganization } from '../support/api';
import { startPrivateStack, type PrivateStack } from '../support/privateStack';
import { freePort } from '../support/ports';
import { addresses, freshEventStore } from '../support/services';
import { errorAnswersOf, keyedLoad, post, sleep, summarize, waitUntil, type Answer } from './harness';
import { startPipeline, type Pipeline } from './pipeline';

/**
 * Issue 11, item 3 ("fail fast with the right answer") and the rows "Redis killed during sends" (every send hung
 * ~40 s, then 500) and "ClickHouse stopped" (activity reads answered 500): with a service a route needs down, the
 * route answers within 2 s with a Postmark-style 503 naming the service and Retry-After; never a 500, never a
 * hang, never a send without its suppression check; /readyz says so within 2 s and says it is back as soon as it
 * is; and the same API process serves again once the service returns, without a restart.
 *
 * Each fault is on a private instance: a redis-server of this file's own, a ClickHouse address nothing answers,
 * a private Kafka (test/support/privateStack.ts). The shared services are never touched.
 */

/**
 * The promise: an answer within 2 s. A test's pass may not depend on the machine's speed, so what is asserted
 * is the condition (an answer came — a 503 naming the service — where a hang would have run into the client's own
 * 10 s abort); the times are figures, printed with how many answers took longer than the promise.
 */
const PROMISE_MS = 2000;
/** How long a readiness change may take to be seen before the test gives up: a hang, not a slow machine. */
const DETECTION_TIMEOUT_MS = 60_000;
const overPromise: { what: string; ms: number }[] = [];
function timed(what: string, answer: { ms: number }) {
  if (answer.ms >= PROMISE_MS) overPromise.push({ what, ms: answer.ms });
}
const figures: Record<string, unknown> = {};

interface RunningApi {
  app: Api;
  baseUrl: string;
  root: string;
  close(): Promise<void>;
}

async function startApi(
  services: ServiceAddresses,
  existing?: TestOrganization,
): Promise<RunningApi & { org: TestOrganization }> {
  const connected = connectApiDependencies(services, { clientId: 'chaos-fail-fast', mailHost: 'mail.sendline.test' });
  const org = existing ?? (await createTestOrganization(connected.deps));
  const app = await buildApi(connected.deps);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    app,
    org,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    root: `http://127.0.0.1:${port}`,
    close: async () => {
      await app.close();
      await connected.disconnect();
    },
  };
}

/** A GET with its answer's time; status 0 when no answer came within 10 s. */
async function get(url: string, apiKey?: string): Promise<Answer> {
  const started = Date.now();
  try {
    const response = await fetch(url, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // kept as text
    }
    const retryAfter = response.headers.get('retry-after');
    return {
      status: response.status,
      body,
      ...(retryAfter !== null ? { retryAfter: Number(retryAfter) } : {}),
      at: started,
      ms: Date.now() - started,
    };
  } catch (error) {
    return { status: 0, body: null, failure: String(error), at: started, ms: Date.now() - started };
  }
}

const message = (org: TestOrganization, i: number) => ({
  From: `sender@${org.domain}`,
  To: `ann+${i}@example.org`,
  Subject: `fail fast ${i}`,
  TextBody: 'Hello',
});

/** Asserts a Postmark-style 503 naming `service`, with Retry-After, answered within the promise. */
function expectUnavailable(answer: Answer, service: RegExp) {
  const shown = JSON.stringify(answer);
  expect(answer.status, shown).toBe(503);
  expect(answer.body.ErrorCode, shown).toBe(503);
  expect(answer.body.Message, shown).toMatch(service);
  expect(answer.body.Message, shown).toMatch(/Retry later/);
  expect(answer.retryAfter, shown).toBeGreaterThan(0);
  timed(`503 ${String(service)}`, answer);
}

/** Polls /readyz until it answers `status`; returns how long that took from `since`. */
async function readyzBecomes(root: string, status: number, since: number, timeoutMs: number): Promise<number> {
  let last: Answer | undefined;
  await waitUntil(
    async () => {
      last = await get(`${root}/readyz`);
      expect(last.status, JSON.stringify(last)).not.toBe(0);
      timed('/readyz', last);
      return last.status === status;
    },
    timeoutMs,
    `/readyz to answer ${status} (last: ${JSON.stringify(last)})`,
  );
  return Date.now() - since;
}

/** A redis-server of this test's own: its own port and directory, an append-only file so a restart keeps the data. */
class PrivateRedis {
  private child: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'sendline-failfast-redis-'));
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      '/usr/bin/redis-server',
      [
        '--bind',
        '127.0.0.1',
        '--port',
        String(this.port),
        '--dir',
        this.dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
      ],
      { stdio: 'ignore' },
    );
    this.child = child;
    const probe = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await waitUntil(
        async () => {
          await probe.connect().catch(() => undefined);
          return (await probe.ping()) === 'PONG';
        },
        10_000,
        'the private redis-server to answer',
      );
    } finally {
      probe.disconnect();
    }
  }

  /** SIGSTOP / SIGCONT: a Redis that keeps its connections open and answers nothing (hung, swapped out). */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await gone;
  }

  async remove(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A TCP server that accepts connections and never answers: a hung service. */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

afterAll(() => {
  // The measured figures, for the closing note.
  console.log(`fail-fast figures: ${JSON.stringify(figures)}`);
  console.log(`answers over the ${PROMISE_MS} ms promise: ${JSON.stringify(overPromise)}`);
});

describe('Redis killed (SIGKILL) during sends', () => {
  let redis: PrivateRedis;
  let api: RunningApi & { org: TestOrganization };

  beforeAll(async () => {
    redis = new PrivateRedis(await freePort());
    await redis.start();
    api = await startApi({ ...addresses, redisUrl: redis.url });
  });

  afterAll(async () => {
    await api?.close();
    await redis?.remove();
  });

  it('answers every send 503 with Retry-After within 2 s, /readyz flips within 2 s, and heals without a restart', async () => {
    const { org, baseUrl, root } = api;
    const before = await post(baseUrl, '/email', org.liveKey, message(org, 0));
    expect(before.status, JSON.stringify(before)).toBe(200);
    expect((await get(`${root}/readyz`)).status).toBe(200);

    const killedAt = Date.now();
    await redis.kill();
    const detection = readyzBecomes(root, 503, killedAt, DETECTION_TIMEOUT_MS);
    // Sends while Redis is down: single and batch, keyed and not, a few at once.
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => post(baseUrl, '/email', org.liveKey, message(org, i + 1))),
      ...Array.from({ length: 4 }, (_, i) =>
        post(baseUrl, '/email', org.liveKey, message(org, i + 20), { 'Idempotency-Key': `k-${i}-${killedAt}` }),
      ),
      post(baseUrl, '/email/batch', org.liveKey, [message(org, 30), message(org, 31)]),
    ]);
    await sleep(300);
    // A second wave, once the client knows its connection is gone.
    answers.push(...(await Promise.all([1, 2, 3].map((i) => post(baseUrl, '/email', org.liveKey, message(org, i))))));
    answers.push(await get(`${baseUrl}/me`, org.liveKey));
    for (const answer of answers) expectUnavailable(answer, /Redis/);
    const readyzDown = await detection;
    const down = await get(`${root}/readyz`);
    expect(down.body).toMatchObject({ status: 'not ready', redis: 'down', kafka: 'up' });

    const restartedAt = Date.now();
    await redis.start();
    const readyzUp = await readyzBecomes(root, 200, restartedAt, DETECTION_TIMEOUT_MS);
    let firstSendAfter = 0;
    await waitUntil(
      async () => {
        const answer = await post(baseUrl, '/email', org.liveKey, message(org, 99));
        if (answer.status === 200) firstSendAfter = Date.now() - restartedAt;
        return answer.status === 200;
      },
      5000,
      'a send to be accepted again after Redis returned',
    );
    const after = await Promise.all([1, 2, 3].map((i) => post(baseUrl, '/email', org.liveKey, message(org, 100 + i))));
    for (const answer of after) expect(answer.status, JSON.stringify(answer)).toBe(200);

    figures.redisKilled = {
      answersMs: { max: Math.max(...answers.map((a) => a.ms)), min: Math.min(...answers.map((a) => a.ms)) },
      answers: answers.length,
      readyzDownAfterKillMs: readyzDown,
      readyzUpAfterRestartMs: readyzUp,
      firstSendAcceptedAfterRestartMs: firstSendAfter,
    };
  });
});

describe('Redis hung (SIGSTOP): connections open, no answers', () => {
  let redis: PrivateRedis;
  let api: RunningApi & { org: TestOrganization };

  beforeAll(async () => {
    redis = new PrivateRedis(await freePort());
    await redis.start();
    api = await startApi({ ...addresses, redisUrl: redis.url });
  });

  afterAll(async () => {
    redis?.resume();
    await api?.close();
    await redis?.remove();
  });

  it('answers sends 503 within 2 s while it is hung, /readyz says so, and sends are accepted once it answers again', async () => {
    const { org, baseUrl, root } = api;
    expect((await post(baseUrl, '/email', org.liveKey, message(org, 0))).status).toBe(200);
    redis.pause();
    const pausedAt = Date.now();
    const detection = readyzBecomes(root, 503, pausedAt, DETECTION_TIMEOUT_MS);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => post(baseUrl, '/email', org.liveKey, message(org, i + 1))),
    );
    await sleep(200);
    answers.push(...(await Promise.all([7, 8].map((i) => post(baseUrl, '/email', org.liveKey, message(org, i))))));
    for (const answer of answers) expectUnavailable(answer, /Redis/);
    const readyzDown = await detection;
    redis.resume();
    const resumedAt = Date.now();
    const readyzUp = await readyzBecomes(root, 200, resumedAt, DETECTION_TIMEOUT_MS);
    expect((await post(baseUrl, '/email', org.liveKey, message(org, 9))).status).toBe(200);
    figures.redisHung = {
      answersMs: { max: Math.max(...answers.map((a) => a.ms)), min: Math.min(...answers.map((a) => a.ms)) },
      readyzDownAfterPauseMs: readyzDown,
      readyzUpAfterResumeMs: readyzUp,
    };
  });
});

describe('ClickHouse unreachable', () => {
  it('answers activity reads 503 within 2 s when ClickHouse refuses connections, and /readyz stays 200 (degraded)', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const api = await startApi({ ...addresses, clickhouseUrl: closed });
    try {
      const list = await get(`${api.baseUrl}/messages/outbound?count=10&offset=0`, api.org.liveKey);
      const details = await get(`${api.baseUrl}/messages/outbound/${crypto.randomUUID()}/details`, api.org.liveKey);
      expectUnavailable(list, /ClickHouse/);
      expectUnavailable(details, /ClickHouse/);
      const ready = await get(`${api.root}/readyz`);
      timed('/readyz', ready);
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ status: 'degraded', clickhouse: 'down', redis: 'up', kafka: 'up' });
      // Sends do not need ClickHouse.
      expect((await post(api.baseUrl, '/email', api.org.liveKey, message(api.org, 1))).status).toBe(200);
      figures.clickhouseRefused = { listMs: list.ms, detailsMs: details.ms, readyzMs: ready.ms };
    } finally {
      await api.close();
    }
  });

  it('answers activity reads 503 within 2 s when ClickHouse accepts connections and never answers', async () => {
    const hung = await silentServer();
    const api = await startApi({ ...addresses, clickhouseUrl: hung.url });
    try {
      const list = await get(`${api.baseUrl}/messages/outbound?count=10&offset=0`, api.org.liveKey);
      expectUnavailable(list, /ClickHouse/);
      const ready = await get(`${api.root}/readyz`);
      timed('/readyz', ready);
      expect(ready.body).toMatchObject({ clickhouse: 'down' });
      figures.clickhouseHung = { listMs: list.ms, readyzMs: ready.ms };
    } finally {
      await api.close();
      await hung.close();
    }
  });
});

describe('ClickHouse stopped, then started again', () => {
  let stack: PrivateStack;
  let api: RunningApi & { org: TestOrganization };

  beforeAll(async () => {
    stack = await startPrivateStack({ name: 'chaos-fail-fast-clickhouse', services: ['clickhouse'] });
    api = await startApi({ ...addresses, clickhouseUrl: stack.addresses.clickhouseUrl });
  });

  afterAll(async () => {
    await api?.close();
    await stack?.stop();
  });

  it('answers activity reads 503 within 2 s while it is down, and 200 again once it is back, without a restart', async () => {
    const { org, baseUrl, root } = api;
    const list = () => get(`${baseUrl}/messages/outbound?count=10&offset=0`, org.liveKey);
    expect((await list()).status).toBe(200);

    await stack.stopService('clickhouse');
    const stoppedAt = Date.now();
    const answers = await Promise.all([
      list(),
      list(),
      get(`${baseUrl}/messages/outbound/${crypto.randomUUID()}/details`, org.liveKey),
    ]);
    for (const answer of answers) expectUnavailable(answer, /ClickHouse/);
    const down = await get(`${root}/readyz`);
    expect(down.body).toMatchObject({ status: 'degraded', clickhouse: 'down' });
    const readyzDown = Date.now() - stoppedAt;
    // Sends do not need ClickHouse.
    expect((await post(baseUrl, '/email', org.liveKey, message(org, 1))).status).toBe(200);

    const startedAt = Date.now();
    await stack.start('clickhouse');
    const startMs = Date.now() - startedAt;
    let firstRead = 0;
    await waitUntil(
      async () => {
        const answer = await list();
        if (answer.status === 200) firstRead = Date.now() - startedAt;
        else expectUnavailable(answer, /ClickHouse/);
        return answer.status === 200;
      },
      30_000,
      'activity reads to answer 200 again',
    );
    const ready = await get(`${root}/readyz`);
    expect(ready.body).toMatchObject({ status: 'ready', clickhouse: 'up' });
    figures.clickhouseStopped = {
      answersMs: answers.map((a) => a.ms),
      readyzDegradedAfterStopMs: readyzDown,
      clickhouseStartMs: startMs,
      firstReadAfterStartMs: firstRead,
    };
  });
});

describe('Schema registry unreachable', () => {
  it('answers a send that needs a schema not registered yet 503 within 2 s; /readyz stays 200 (degraded)', async () => {
    const healthy = await startApi(addresses);
    const closed = `http://127.0.0.1:${await freePort()}/apis/ccompat/v7`;
    // A fresh API process (no schema id cached yet) whose registry refuses connections, on the same Kafka and Redis.
    const api = await startApi({ ...addresses, schemaRegistryUrl: closed }, healthy.org);
    try {
      const send = await post(api.baseUrl, '/email', api.org.liveKey, message(api.org, 1));
      expectUnavailable(send, /schema registry/);
      const ready = await get(`${api.root}/readyz`);
      timed('/readyz', ready);
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ status: 'degraded', registry: 'down', kafka: 'up', redis: 'up' });
      // An API that has its schemas keeps sending while the registry is away: the route does not need it.
      expect((await post(healthy.baseUrl, '/email', healthy.org.liveKey, message(healthy.org, 2))).status).toBe(200);
      figures.registryRefused = { sendMs: send.ms, readyzMs: ready.ms };
    } finally {
      await api.close();
      await healthy.close();
    }
  });
});

describe('Kafka killed (SIGKILL), no broker left', () => {
  let stack: PrivateStack;
  let api: RunningApi & { org: TestOrganization };

  beforeAll(async () => {
    stack = await startPrivateStack({ name: 'chaos-fail-fast', services: ['kafka'] });
    api = await startApi({ ...addresses, kafkaBrokers: stack.addresses.kafkaBrokers });
  });

  afterAll(async () => {
    await api?.close();
    await stack?.stop();
  });

  it('answers sends 503 with Retry-After within 2 s, /readyz flips within 2 s, and sends are accepted once it is back', async () => {
    const { org, baseUrl, root } = api;
    expect((await post(baseUrl, '/email', org.liveKey, message(org, 0))).status).toBe(200);

    const killing = Date.now();
    await stack.kill('kafka');
    // `infra kill` returns once the process is gone: detection is measured from there.
    const killedAt = Date.now();
    const killMs = killedAt - killing;
    const detection = readyzBecomes(root, 503, killedAt, DETECTION_TIMEOUT_MS);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        post(baseUrl, '/email', org.liveKey, message(org, i + 1), { 'Idempotency-Key': `kafka-${i}-${killedAt}` }),
      ),
    );
    await sleep(500);
    answers.push(...(await Promise.all([7, 8].map((i) => post(baseUrl, '/email', org.liveKey, message(org, i))))));
    for (const answer of answers) expectUnavailable(answer, /Kafka/);
    const readyzDown = await detection;
    expect((await get(`${root}/readyz`)).body).toMatchObject({ status: 'not ready', kafka: 'down', redis: 'up' });

    const restartedAt = Date.now();
    await stack.start('kafka');
    const startedMs = Date.now() - restartedAt;
    const readyzUp = await readyzBecomes(root, 200, restartedAt, DETECTION_TIMEOUT_MS);
    let firstSendAfter = 0;
    await waitUntil(
      async () => {
        const answer = await post(baseUrl, '/email', org.liveKey, message(org, 99));
        if (answer.status === 200) firstSendAfter = Date.now() - restartedAt;
        return answer.status === 200;
      },
      60_000,
      'a send to be accepted again after Kafka returned',
    );
    figures.kafka = {
      answersMs: { max: Math.max(...answers.map((a) => a.ms)), min: Math.min(...answers.map((a) => a.ms)) },
      answers: answers.length,
      killCommandMs: killMs,
      readyzDownAfterKillMs: readyzDown,
      kafkaStartMs: startedMs,
      readyzUpAfterRestartMs: readyzUp,
      firstSendAcceptedAfterRestartMs: firstSendAfter,
    };
  });
});

describe('a consumer while Redis is down (SIGKILL) for a few seconds', () => {
  let redis: PrivateRedis;

  beforeAll(async () => {
    redis = new PrivateRedis(await freePort());
    await redis.start();
  });

  afterAll(async () => {
    await redis?.remove();
  });

  it('waits for Redis and applies every event once it is back: nothing is dead-lettered', async () => {
    const store = await freshEventStore('chaos-fail-fast-consumer');
    const client = createRedis(redis.url);
    const view = new SuppressionView(client);
    const organizationId = crypto.randomUUID();
    const events: SuppressionEvent[] = Array.from({ length: 20 }, (_, i) => ({
      type: 'SuppressionAdded',
      data: { emailAddress: `gone${i}@example.org`, reason: 'ManualSuppression', origin: 'Admin', createdAt: i },
      metadata: { eventId: crypto.randomUUID(), organizationId, occurredAt: Date.now(), schemaVersion: 1 },
    }));
    // As the projector and the sender consume: a view write per batch; here with the sender's strictest settings
    // (an unknown error is not retried, two attempts at most), which before dead-lettered at once.
    const consumer = await store.consume({
      groupId: `chaos-fail-fast-${crypto.randomUUID()}`,
      topics: [store.topics.suppressions],
      retryUnknownErrors: false,
      maxAttempts: 2,
      handleBatch: async (items) => view.apply(items.map((item) => item.event as unknown as SuppressionEvent)),
    });
    try {
      await redis.kill();
      await store.append(events as unknown as StoredEvent[]);
      await sleep(5000);
      const restartedAt = Date.now();
      await redis.start();
      await waitUntil(
        async () =>
          (
            await view.suppressedAmong(
              organizationId,
              events.map((e) => e.data.emailAddress),
            )
          ).size === 20,
        20_000,
        'every suppression to be in the view after Redis returned',
      );
      figures.consumerAppliedAfterRedisRestartMs = Date.now() - restartedAt;
      const admin = store.kafka.admin();
      await admin.connect();
      try {
        const deadLetters = await admin.fetchTopicOffsets(deadLetterTopicOf(store.topics.suppressions));
        expect(deadLetters.reduce((sum, p) => sum + Number(p.high), 0)).toBe(0);
      } finally {
        await admin.disconnect();
      }
    } finally {
      await consumer.stop();
      await store.disconnect();
      client.disconnect();
    }
  });
});

describe('Redis killed (SIGKILL) during keyed sends, the whole path as npm start runs it', () => {
  let stack: PrivateStack;
  let pipeline: Pipeline;

  beforeAll(async () => {
    stack = await startPrivateStack({ name: 'chaos-fail-fast-redis' });
    pipeline = await startPipeline(stack.addresses);
  });

  afterAll(async () => {
    await pipeline?.close();
    await stack?.stop();
  });

  it('answers 503 with Retry-After within 2 s while Redis is down; the API, sender and projector carry on once it is back', async () => {
    const count = 150;
    const loading = keyedLoad({
      baseUrl: pipeline.baseUrl,
      apiKey: pipeline.org.liveKey,
      count,
      ratePerSecond: 15,
      message: (i) => pipeline.message(i),
      retryForMs: 60_000,
      retryDelayMs: 500,
    });
    await sleep(3000);
    const killing = Date.now();
    await stack.kill('redis');
    const killedAt = Date.now();
    await sleep(5000);
    await stack.start('redis');
    const restartedAt = Date.now();
    const sends = await loading;
    const summary = summarize(sends);

    // Every error answer came fast, as a Postmark-style 503 with Retry-After; no 500, no dropped connection.
    const errors = errorAnswersOf(sends);
    console.log(
      'answers over 1 s (started after the kill, ms):',
      JSON.stringify(
        sends
          .flatMap((send) => send.answers)
          .filter((a) => a.ms > 1000)
          .map((a) => ({ status: a.status, afterKill: a.at - killedAt, afterRestart: a.at - restartedAt, ms: a.ms })),
      ),
    );
    expect(errors.length, JSON.stringify(summary)).toBeGreaterThan(0);
    for (const answer of errors) expectUnavailable(answer, /Redis/);
    expect(summary.transportFailures).toEqual({});
    // Every send was accepted in the end (its keyed retries), each under a MessageID of its own.
    expect(summary.unanswered, JSON.stringify(summary)).toBe(0);
    expect(summary.distinctMessageIds).toBe(count);
    const firstAcceptedAfterRestart = Math.min(
      ...sends.flatMap((send) =>
        send.answers.filter((a) => a.status === 200 && a.at >= restartedAt).map((a) => a.at + a.ms),
      ),
    );

    // The sender and the projector (the same processes) carry on: each accepted message reaches the mail server.
    const expected = new Set(sends.map((send) => send.messageId!));
    await waitUntil(
      () => pipeline.undelivered(expected).length === 0,
      120_000,
      `every accepted message to be delivered:\n${pipeline.sender.output.slice(-3000)}`,
    );
    const lastDeliveredAfterRestartMs = Date.now() - restartedAt;
    await sleep(2000); // a late second copy would arrive now
    const deliveredTwice = [...pipeline.deliveriesByMessageId().values()].filter((n) => n > 1).length;
    expect(deliveredTwice).toBe(0);
    // The projector's activity view shows them too (read through the same API process).
    await waitUntil(
      async () => {
        const answer = await get(`${pipeline.baseUrl}/messages/outbound?count=1&offset=0`, pipeline.org.liveKey);
        return answer.status === 200 && answer.body.TotalCount >= count;
      },
      60_000,
      `the activity view to show every message:\n${pipeline.projector.output.slice(-3000)}`,
    );
    expect(pipeline.api.running && pipeline.sender.running && pipeline.projector.running).toBe(true);

    figures.redisEndToEnd = {
      ...summary,
      killCommandMs: killedAt - killing,
      downForMs: restartedAt - killedAt,
      slowestErrorAnswerMs: Math.max(...errors.map((a) => a.ms)),
      firstAcceptedAfterRestartMs: firstAcceptedAfterRestart - restartedAt,
      allDeliveredAfterRestartMs: lastDeliveredAfterRestartMs,
      deliveredTwice,
    };
  });
});
