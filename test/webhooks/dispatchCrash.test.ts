import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { WEBHOOK_ID_MAX, type MessageAccepted, type MessageDelivered } from '@sendline/domain';
import {
  AccountsView,
  createRedis,
  encryptSecret,
  EventStore,
  prefixedTopicNames,
  secretKeyFromEnv,
  topicConfigs,
  type Redis,
} from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrganization, type TestOrganization } from '../support/api';
import { addresses, eventually } from '../support/services';
import { deleteTopicsUnder } from './support';

/**
 * At least once across a crash: the webhooks process (apps/webhooks/src/main.ts, its own process) killed with
 * SIGKILL while calls are in flight and events keep coming, then started again on the same consumer groups: every
 * expected call (each delivery × each webhook) reaches the receiver at least once. Repeats are allowed (a receiver
 * drops them by Webhook-Id) and counted.
 */

const MESSAGES = 300;
const WEBHOOKS = 2;
const prefix = `test-${randomUUID().slice(0, 8)}`;
const topics = prefixedTopicNames(prefix);
const groups = {
  dispatcher: `${prefix}-webhooks-dispatcher`,
  caller: `${prefix}-webhooks-calls`,
  notices: `${prefix}-webhooks-notices`,
};

let store: EventStore;
let redis: Redis;
let org: TestOrganization;
let server: Server;
let url: string;
const received = new Map<string, number>();
let total = 0;
const children: ChildProcess[] = [];

function startWebhooks(start: 'latest' | 'earliest'): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/webhooks/src/main.ts'], {
    env: {
      ...process.env,
      SENDLINE_DEV: '1',
      SENDLINE_TOPIC_PREFIX: prefix,
      SENDLINE_WEBHOOKS_GROUP: groups.dispatcher,
      SENDLINE_WEBHOOKS_CALLER_GROUP: groups.caller,
      SENDLINE_WEBHOOKS_NOTICES_GROUP: groups.notices,
      SENDLINE_WEBHOOKS_START: start,
      SENDLINE_WEBHOOK_RETRY_DELAYS_MS: '200,400,800',
      SENDLINE_WEBHOOKS_SESSION_TIMEOUT_MS: '6000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the webhooks process did not start')), 60_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('webhooks started')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('exit', (code, signal) => reject(new Error(`the webhooks process exited (${code ?? signal})`)));
  });
}

function events(index: number): [MessageAccepted, MessageDelivered] {
  const at = Date.now();
  const messageId = randomUUID();
  const to = `r${index}@dest.example.net`;
  const metadata = () => ({
    eventId: randomUUID(),
    organizationId: org.organizationId,
    occurredAt: at,
    schemaVersion: 1,
  });
  return [
    {
      type: 'MessageAccepted',
      data: {
        messageId,
        from: { email: `orders@${org.domain}` },
        to: [{ email: to }],
        cc: [],
        bcc: [],
        replyTo: [],
        subject: 'Crash',
        tag: 'crash',
        textBody: 'x',
        headers: [],
        metadata: {},
        attachments: [],
        trackOpens: false,
        trackLinks: 'None',
        messageStream: 'outbound',
        sizeBytes: 1,
        activeRecipients: [to],
        suppressedRecipients: [],
        submittedAt: at,
      },
      metadata: metadata(),
    },
    {
      type: 'MessageDelivered',
      data: { messageId, recipient: to, smtpResponse: '250 OK', destinationServer: 'mx.dest.example.net' },
      metadata: metadata(),
    },
  ];
}

beforeAll(async () => {
  store = new EventStore({
    brokers: addresses.kafkaBrokers,
    registryUrl: addresses.schemaRegistryUrl,
    clientId: 'test-webhooks-crash',
    topics,
  });
  await store.ensureTopics(topicConfigs(topics, 3));
  redis = createRedis(addresses.redisUrl);
  org = await createTestOrganization({ store, accounts: new AccountsView(redis) });
  // A receiver that takes 20 ms per call, so the kill finds calls in flight.
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { MessageID: string };
      const key = `${body.MessageID} ${request.url}`;
      received.set(key, (received.get(key) ?? 0) + 1);
      total++;
      setTimeout(() => response.writeHead(200).end('ok'), 20);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const secretKey = secretKeyFromEnv();
  for (let i = 0; i < WEBHOOKS; i++) {
    await org.run({
      type: 'CreateWebhook',
      data: {
        webhookId: randomInt(1, WEBHOOK_ID_MAX),
        url: `${url}/hook-${i}`,
        triggers: { delivery: { enabled: true } },
        signingSecretSealed: encryptSecret(`whsec_${randomBytes(32).toString('base64')}`, secretKey),
        allowHttp: true,
      },
    });
  }
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  server?.closeAllConnections();
  server?.close();
  redis?.disconnect();
  if (store) {
    await deleteTopicsUnder(store, `${prefix}.`);
    await store.disconnect();
  }
});

describe('the webhooks process killed mid-stream and started again', () => {
  it('loses no call: every delivery reaches every webhook at least once', async () => {
    const first = await startWebhooks('latest');
    const messageIds: string[] = [];
    let appended = 0;
    const appendSome = async (count: number) => {
      for (let end = appended + count; appended < end; appended++) {
        const pair = events(appended);
        messageIds.push(pair[0].data.messageId);
        await store.append(pair);
      }
    };
    const feeding = (async () => {
      while (appended < MESSAGES) {
        await appendSome(10);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await eventually(
      async () => (total >= (MESSAGES * WEBHOOKS) / 4 ? true : undefined),
      60_000,
      'a quarter of the calls',
    );
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const atKill = total;
    // The restart resumes from the groups' commits ('earliest' only applies to a group that never committed).
    await startWebhooks('earliest');
    await feeding;
    await eventually(
      async () =>
        messageIds.every((id) => received.has(`${id} /hook-0`) && received.has(`${id} /hook-1`)) ? true : undefined,
      90_000,
      'every call of every delivery',
    );
    const repeats = [...received.values()].reduce((sum, count) => sum + count - 1, 0);
    console.log(
      `calls before the kill ${atKill}, in all ${total}, repeated ${repeats} (each key once is ${received.size})`,
    );
    expect(received.size).toBe(MESSAGES * WEBHOOKS);
    expect(atKill).toBeLessThan(MESSAGES * WEBHOOKS);
  });
});
