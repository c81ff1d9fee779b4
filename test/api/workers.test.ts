import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { AccountsView, createRedis, EventStore, type Redis } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrganization, type TestOrganization } from '../support/api';
import { freePort } from '../support/ports';
import { addresses, eventually } from '../support/services';

// The API as its users run it (apps/api/src/main.ts), as the primary of two worker processes.
let PORT: number;

let api: ChildProcess;
let output = '';
let redis: Redis;
let store: EventStore;
let org: TestOrganization;

/** A request on a connection of its own (`agent: false`): the primary hands connections to the workers in turn. */
function post(path: string, key: string, body: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port: PORT,
        path: `/v1${path}`,
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
          authorization: `Bearer ${key}`,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

function start(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/api/src/main.ts'], {
    env: { ...process.env, SENDLINE_API_PORT: String(PORT), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return child;
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

beforeAll(async () => {
  PORT = await freePort();
  redis = createRedis(addresses.redisUrl);
  store = new EventStore({
    brokers: addresses.kafkaBrokers,
    registryUrl: addresses.schemaRegistryUrl,
    clientId: 'workers-test',
  });
  org = await createTestOrganization({ store, accounts: new AccountsView(redis) });
  api = start({ SENDLINE_API_WORKERS: '2' });
  await eventually(
    async () => ((await fetch(`http://127.0.0.1:${PORT}/readyz`).catch(() => undefined))?.ok ? true : undefined),
    60_000,
    'the API workers to be ready',
  );
}, 90_000);

afterAll(async () => {
  if (api && api.exitCode === null) api.kill('SIGKILL');
  await store?.disconnect();
  redis?.disconnect();
});

describe('the API with SENDLINE_API_WORKERS=2', () => {
  it('accepts sends on every worker, and /metrics counts the messages of all of them', async () => {
    const sends = 8;
    for (let i = 0; i < sends; i++) {
      const answer = await post('/email', org.liveKey, {
        From: `orders@${org.domain}`,
        To: `worker-${i}@example.net`,
        Subject: 'Hello',
        TextBody: 'Hi',
      });
      expect(answer).toMatchObject({ status: 200, body: { ErrorCode: 0 } });
    }
    // Whichever worker answers the scrape, the count is the sum of both (each alone took about half).
    for (let scrape = 0; scrape < 2; scrape++) {
      const text = await (await fetch(`http://127.0.0.1:${PORT}/metrics`)).text();
      expect(text).toMatch(new RegExp(`^sendline_messages_accepted_total\\{mode="live"\\} ${sends}$`, 'm'));
    }
  }, 60_000);

  it('drains and exits 0 on SIGTERM', async () => {
    api.kill('SIGTERM');
    expect(await exited(api)).toBe(0);
  }, 30_000);
});

describe('SENDLINE_API_WORKERS', () => {
  it('refuses a value that is not a whole number ≥ 1, with a message, exit code 2', async () => {
    output = '';
    const child = start({ SENDLINE_API_WORKERS: 'two' });
    expect(await exited(child)).toBe(2);
    expect(output).toContain('SENDLINE_API_WORKERS must be a whole number ≥ 1, not "two"');
  }, 30_000);
});

describe('an API worker that cannot start', () => {
  it('is started again a few times, then the API gives up with exit code 1 instead of looping', async () => {
    // The port is taken: every worker fails to listen.
    const { createServer } = await import('node:net');
    const blocker = createServer();
    const taken: number = await new Promise((resolve) =>
      blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as { port: number }).port)),
    );
    output = '';
    const child = start({ SENDLINE_API_PORT: String(taken), SENDLINE_API_WORKERS: '1' });
    try {
      expect(await exited(child)).toBe(1);
      expect(output).toContain('API worker exited; starting another');
      expect(output).toContain('giving up');
    } finally {
      blocker.close();
    }
  }, 90_000);
});
