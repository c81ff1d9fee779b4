import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { AccountsView, createRedis, EventStore, prefixedTopicNames, topicConfigs, type Redis } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, DIST as CONSOLE_DIST } from '../../apps/console/scripts/build';
import { bundleOf, buildApps, type CompiledApp } from '../../infra/local/src/build';
import { createTestOrganization, type TestOrganization } from '../support/api';
import { freePort } from '../support/ports';
import { addresses, deleteTopicsAndDisconnect, eventually } from '../support/services';
import { startMailServer } from '../sender/support';
import type { TestMailServer } from '@sendline/infra';

/**
 * The compiled start (docs/operations.md): the API, the sender and the projector built by `npm run build`
 * (apps/<app>/dist/main.js) and started as a process manager starts them — `node --enable-source-maps
 * apps/<app>/dist/main.js`, no TypeScript loader, no SENDLINE_DEV, the settings in the environment only (a
 * `.local/services.env` in their directory is not read), from a directory that is not the repository — on topics
 * and consumer groups of their own. A message sent through the API reaches the mail server (the sender relays to it,
 * as a deployment's smarthost would) and the activity view.
 *
 * The test compiles the three apps itself (a second or two; `npm test` has built them all a moment before, this
 * makes the file right when run alone or after a source changed). The Avro schemas (every event the apps write and
 * read), ClickHouse's migrations (run by the projector at start) and the console's pages are read at run time from
 * the repository: the message's way and the console's page show the compiled apps find them.
 */

const APPS = ['api', 'sender', 'projector'] as const satisfies readonly CompiledApp[];
const prefix = `test-compiled-${randomUUID().slice(0, 8)}`;
const topics = prefixedTopicNames(prefix);

let store: EventStore;
let redis: Redis;
let org: TestOrganization;
let mail: TestMailServer;
let workDir: string;
let apiPort: number;
let metricsPort: number;
const children = new Map<string, ChildProcess>();
const output = new Map<string, string>();
const stdoutLines = new Map<string, string[]>();

/** The environment of a compiled app: the services' addresses, the secret key and its own settings, nothing else. */
function productionEnv(own: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    KAFKA_BROKERS: addresses.kafkaBrokers.join(','),
    SCHEMA_REGISTRY_URL: addresses.schemaRegistryUrl,
    CLICKHOUSE_URL: addresses.clickhouseUrl,
    CLICKHOUSE_DATABASE: addresses.clickhouseDatabase,
    REDIS_URL: addresses.redisUrl,
    SENDLINE_SECRET_KEY: process.env.SENDLINE_SECRET_KEY,
    SENDLINE_TOPIC_PREFIX: prefix,
    ...own,
  };
}

function start(app: (typeof APPS)[number], own: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--enable-source-maps', bundleOf(app)], {
    cwd: workDir,
    env: productionEnv(own),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  output.set(app, '');
  stdoutLines.set(app, []);
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output.set(app, (output.get(app)! + chunk.toString()).slice(-20_000));
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    stdoutLines.get(app)!.push(...lines.filter(Boolean));
  });
  child.stderr!.on('data', (chunk: Buffer) => output.set(app, (output.get(app)! + chunk.toString()).slice(-20_000)));
  children.set(app, child);
  return child;
}

const outputs = () => [...output].map(([app, text]) => `--- ${app}:\n${text.slice(-3000)}`).join('\n');

/** `eventually`, with the apps' output in its failure. */
async function until<T>(check: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  try {
    return await eventually(check, timeoutMs, what);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${outputs()}`, { cause: error });
  }
}

/** The process and its descendants (the API's primary and its workers). */
function processTree(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // gone
  }
  return [pid, ...children.flatMap(processTree)];
}

const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
const environmentOf = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

beforeAll(async () => {
  await buildApps(APPS);
  // The console's pages, which the compiled API serves from apps/console/dist (npm test has built them).
  if (!existsSync(join(CONSOLE_DIST, 'index.html'))) await buildConsole();
  workDir = mkdtempSync(join(tmpdir(), 'sendline-compiled-'));
  // A trap: the apps run with tsx fill unset variables from ./.local/services.env, and these would stop all three at
  // start (pino knows no such level; the sender no such start). The compiled apps read their environment only.
  mkdirSync(join(workDir, '.local'));
  writeFileSync(join(workDir, '.local', 'services.env'), 'LOG_LEVEL=not-a-level\nSENDLINE_SENDER_START=not-a-start\n');
  store = new EventStore({
    brokers: addresses.kafkaBrokers,
    registryUrl: addresses.schemaRegistryUrl,
    clientId: 'test-compiled-start',
    topics,
  });
  await store.ensureTopics(topicConfigs(topics, 3));
  redis = createRedis(addresses.redisUrl);
  const accounts = new AccountsView(redis);
  org = await createTestOrganization({ store, accounts });
  mail = await startMailServer(accounts, [org], { verifyDkim: true });
  [apiPort, metricsPort] = await Promise.all([freePort(), freePort()]);

  start('projector', {
    SENDLINE_PROJECTOR_METRICS_PORT: String(metricsPort),
    SENDLINE_PROJECTOR_GROUP_PREFIX: `${prefix}-projector`,
    SENDLINE_PROJECTOR_SESSION_TIMEOUT_MS: '6000',
  });
  start('sender', {
    // Production delivers to each recipient's MX; a deployment that relays through a smarthost sets this.
    SENDLINE_SMTP_RELAY: mail.address,
    SENDLINE_SENDER_GROUP: `${prefix}-sender`,
    SENDLINE_SENDER_RETRY_GROUP: `${prefix}-sender-retries`,
    SENDLINE_SENDER_SESSION_TIMEOUT_MS: '6000',
  });
  start('api', { SENDLINE_API_PORT: String(apiPort), SENDLINE_API_WORKERS: '1' });
  await until(
    async () => ((await fetch(`http://127.0.0.1:${apiPort}/readyz`).catch(() => undefined))?.ok ? true : undefined),
    90_000,
    'the compiled API to be ready',
  );
});

afterAll(async () => {
  const exits = [...children.values()]
    .filter((child) => child.exitCode === null && child.signalCode === null)
    .map((child) => {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      return gone;
    });
  await Promise.all(exits);
  await mail?.stop();
  redis?.disconnect();
  if (store) await deleteTopicsAndDisconnect(store);
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

const api = (path: string, init: RequestInit = {}) =>
  fetch(`http://127.0.0.1:${apiPort}/v1${path}`, {
    ...init,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${org.liveKey}`, ...init.headers },
  });

describe('the compiled start: node apps/<app>/dist/main.js', () => {
  it('sends a message through the compiled API, sender and projector: delivered and in the activity view', async () => {
    const sent = await api('/email', {
      method: 'POST',
      body: JSON.stringify({
        From: `Orders <orders@${org.domain}>`,
        To: 'customer@example.net',
        Subject: 'Your receipt',
        TextBody: 'Thank you.',
      }),
    });
    expect(sent.status).toBe(200);
    const { MessageID } = (await sent.json()) as { MessageID: string };

    const delivered = await until(
      async () => mail.messages().find((message) => message.messageId?.includes(MessageID)),
      60_000,
      'the message at the mail server',
    );
    expect(delivered.recipients).toEqual(['customer@example.net']);
    expect(delivered.dkim.result).toBe('pass');

    // The projector's activity view, read through the API.
    const details = await until(
      async () => {
        const answer = await api(`/messages/outbound/${MessageID}/details`);
        if (answer.status !== 200) return undefined;
        const body = (await answer.json()) as { MessageEvents: { Type: string; Recipient: string }[] };
        return body.MessageEvents.some((event) => event.Type === 'Delivered') ? body : undefined;
      },
      60_000,
      'the delivery in the activity view',
    );
    expect(details.MessageEvents).toContainEqual(
      expect.objectContaining({ Type: 'Delivered', Recipient: 'customer@example.net' }),
    );

    // The projector's liveness endpoint, beside its metrics.
    const health = await fetch(`http://127.0.0.1:${metricsPort}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });

    // Resident memory after a first message, for docs/operations.md.
    const memory = Object.fromEntries(
      APPS.map((app) => {
        const pids = processTree(children.get(app)!.pid!);
        return [app, pids.map((pid) => `${rssMiB(pid).toFixed(0)} MiB`).join(' + ')];
      }),
    );
    console.log(`compiled apps' resident memory: ${JSON.stringify(memory)}`);
  });

  it('runs on node alone: no TypeScript loader in any process, JSON log lines', () => {
    for (const app of APPS) {
      const pids = processTree(children.get(app)!.pid!);
      if (app === 'api') expect(pids.length).toBe(2); // the primary and its one worker
      for (const pid of pids) {
        const args = commandLine(pid);
        expect(args.slice(1)).toContain(bundleOf(app));
        expect(args.join(' ')).not.toMatch(/tsx|ts-node|\.ts\b|--import|--loader|--experimental/);
        expect(environmentOf(pid).filter((entry) => entry.startsWith('NODE_OPTIONS='))).toEqual([]);
        expect(environmentOf(pid).filter((entry) => entry.startsWith('SENDLINE_DEV='))).toEqual([]);
      }
      const lines = stdoutLines.get(app)!;
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines)
        expect(() => JSON.parse(line), `${app} wrote a line that is not JSON: ${line}`).not.toThrow();
    }
  });

  it('finds the files it reads at run time in the repository: the console’s pages', async () => {
    // A page under /console/ is index.html (a browser test rebuilding the console at that moment is waited out).
    const page = await until(
      async () => {
        const answer = await fetch(`http://127.0.0.1:${apiPort}/console/activity`);
        return answer.status === 200 ? answer.text() : undefined;
      },
      30_000,
      'the console page from the compiled API',
    );
    expect(page).toBe(readFileSync(join(CONSOLE_DIST, 'index.html'), 'utf8'));
  });

  it('has the production defaults: a webhook to a private address or over plain http is refused', async () => {
    for (const url of ['https://10.0.0.7/hooks', 'http://hooks.example.com/hooks', 'https://127.0.0.1/hooks']) {
      const answer = await api('/webhooks', {
        method: 'POST',
        body: JSON.stringify({ Url: url, Triggers: { Delivery: { Enabled: true } } }),
      });
      expect(answer.status, url).toBe(422);
      const body = (await answer.json()) as { ErrorCode: number; Message: string };
      expect(body.ErrorCode, url).toBeGreaterThan(0);
    }
  });
});
