/**
 * npm run bench:webhooks — events → webhook calls, on this machine (loopback only, about a minute).
 *
 * Runs the webhooks process (apps/webhooks/src/main.ts, as its own process, on topics and consumer groups of this
 * run) against a loopback HTTP receiver in this process, on the real Kafka, schema registry and Redis. This process
 * appends MessageAccepted and MessageDelivered events straight to the run's email.messages (the API and the sender
 * are not what is measured) for an organization with BENCH_WEBHOOKS webhooks (Delivery on), at BENCH_RATE
 * deliveries per second for BENCH_WARMUP_S + BENCH_SECONDS, open loop; every delivery makes one call per webhook.
 * The first BENCH_WARMUP_S seconds warm the process up (its code compiled, its connections to the receiver open):
 * their calls are counted and checked like the others but left out of the figures, which are for the sustained
 * rate, and shown on a line of their own.
 *
 * Reports:
 * - offered: the deliveries appended per second, from the first to the last (each event is stamped with the time it
 *   was due on the open-loop schedule, not when a late append got to it, so an append falling behind shows up as
 *   latency instead of hiding it);
 * - calls/s: calls received per second, from the first call to the last;
 * - event→call p50 / p99: when the receiver got the call − the MessageDelivered's occurredAt (its DeliveredAt);
 * - calls expected / received / duplicates (the same Webhook-Id twice) / signature failures;
 * - CPU ms per call of the webhooks process (from /proc), and of this process (the receiver and the appends), to
 *   show the receiver is not what limits the run.
 *
 * BENCH_WEBHOOKS (10), BENCH_RATE (200 deliveries/s: 2,000 calls/s, the target), BENCH_SECONDS (20), BENCH_WARMUP_S (5).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes, randomInt, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { isWebhookCallScheduled, WEBHOOK_ID_MAX, type MessageAccepted, type MessageDelivered } from '@sendline/domain';
import {
  AccountsView,
  createRedis,
  encryptSecret,
  EventStore,
  scanKeys,
  unlinkKeys,
  type Redis,
  loadLocalServicesEnv,
  secretKeyFromEnv,
  serviceAddresses,
  topicConfigs,
  webhookRetryTopic,
  withAdmin,
  deadLetterTopicOf,
} from '@sendline/infra';
import { POSTMARK_RETRY_DELAYS_MS, WEBHOOKS_NODE_FLAGS } from '@sendline/webhooks';
import { createTestOrganization } from '../test/support/api';
import { cpuMs, percentile, PROFILE_FLAGS } from './support';

const WEBHOOKS = Number(process.env.BENCH_WEBHOOKS ?? 10);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_S ?? 5);
const DRAIN_MS = 20_000;
const TICK_MS = 50;

function accepted(organizationId: string, messageId: string, to: string, at: number): MessageAccepted {
  return {
    type: 'MessageAccepted',
    data: {
      messageId,
      from: { email: 'orders@bench.example' },
      to: [{ email: to }],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: 'Your receipt',
      tag: 'bench',
      textBody: 'Thanks.',
      headers: [],
      metadata: { run: 'bench' },
      attachments: [],
      trackOpens: false,
      trackLinks: 'None',
      messageStream: 'outbound',
      sizeBytes: 20,
      activeRecipients: [to],
      suppressedRecipients: [],
      submittedAt: at,
    },
    metadata: { eventId: randomUUID(), organizationId, occurredAt: at, schemaVersion: 1 },
  };
}

function delivered(organizationId: string, messageId: string, to: string, at: number): MessageDelivered {
  return {
    type: 'MessageDelivered',
    data: { messageId, recipient: to, smtpResponse: '250 2.0.0 OK', destinationServer: 'mx.bench.example' },
    metadata: { eventId: randomUUID(), organizationId, occurredAt: at, schemaVersion: 1 },
  };
}

async function main(): Promise<void> {
  loadLocalServicesEnv();
  const run = randomUUID().slice(0, 8);
  process.env.SENDLINE_TOPIC_PREFIX = `bench-${run}`;
  const addresses = serviceAddresses();
  const redis = createRedis(addresses.redisUrl);
  const accounts = new AccountsView(redis);
  const store = EventStore.at(addresses, 'bench-webhooks');
  await store.ensureTopics(topicConfigs(addresses.topics));
  const org = await createTestOrganization({ store, accounts });
  const secretKey = secretKeyFromEnv();

  // The receiver: counts calls, their latency, repeats and signatures.
  const secrets = new Map<string, string>();
  const latencies: number[] = [];
  /** Events due before this (the warm-up) are not in the figures; set when the appends start. */
  let measuredFrom = Infinity;
  const warmUpLatencies: number[] = [];
  const seen = new Set<string>();
  /** Per call (Webhook-Id): its event's time and when its first attempt arrived, for the stages below. */
  const arrivals = new Map<string, { deliveredAt: number; receivedAt: number }>();
  let received = 0;
  let measured = 0;
  let duplicates = 0;
  let badSignatures = 0;
  let firstAt = 0;
  let lastAt = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const now = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(request.headers['webhook-id']);
      const secret = secrets.get(request.url ?? '');
      const key = Buffer.from((secret ?? '').replace(/^whsec_/, ''), 'base64');
      const expected = createHmac('sha256', key)
        .update(`${id}.${request.headers['webhook-timestamp']}.${body}`)
        .digest('base64');
      if (request.headers['webhook-signature'] !== `v1,${expected}`) badSignatures++;
      if (seen.has(id)) duplicates++;
      seen.add(id);
      received++;
      const deliveredAt = Date.parse((JSON.parse(body) as { DeliveredAt: string }).DeliveredAt);
      if (deliveredAt < measuredFrom) {
        warmUpLatencies.push(now - deliveredAt);
      } else {
        measured++;
        firstAt ||= now;
        lastAt = now;
        latencies.push(now - deliveredAt);
        if (!arrivals.has(id)) arrivals.set(id, { deliveredAt, receivedAt: now });
      }
      response.writeHead(200).end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  for (let i = 0; i < WEBHOOKS; i++) {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const path = `/hooks/${i}`;
    secrets.set(path, secret);
    await org.run({
      type: 'CreateWebhook',
      data: {
        webhookId: randomInt(1, WEBHOOK_ID_MAX),
        url: `http://127.0.0.1:${port}${path}`,
        triggers: { delivery: { enabled: true } },
        signingSecretSealed: encryptSecret(secret, secretKey),
        allowHttp: true,
      },
    });
  }

  let errors = 0;
  const webhooks: ChildProcess = spawn(
    process.execPath,
    // The flags it runs with under npm start (infra/local/bin/start).
    [...PROFILE_FLAGS, ...WEBHOOKS_NODE_FLAGS, '--import', 'tsx', 'apps/webhooks/src/main.ts'],
    {
      env: {
        ...process.env,
        SENDLINE_DEV: '1',
        SENDLINE_WEBHOOKS_GROUP: `bench-${run}-webhooks-dispatcher`,
        SENDLINE_WEBHOOKS_CALLER_GROUP: `bench-${run}-webhooks-calls`,
        SENDLINE_WEBHOOKS_NOTICES_GROUP: `bench-${run}-webhooks-notices`,
        SENDLINE_WEBHOOKS_START: 'latest',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    webhooks.on('exit', (code) => reject(new Error(`the webhooks process exited (${code})`)));
    createInterface({ input: webhooks.stdout! }).on('line', (line) => {
      if (line.includes('webhooks started')) resolve();
      // Its warnings and errors are shown (a call given up, a failing batch), so a slow run says why.
      if (line.includes('"level":"error"') || line.includes('"level":"warn"')) errors++;
      if (errors <= 5 && (line.includes('"level":"error"') || line.includes('"level":"warn"'))) console.error(line);
    });
  });
  const cpuBefore = cpuMs(webhooks);
  const ownCpuBefore = process.cpuUsage();

  console.log(
    `bench:webhooks — ${RATE} deliveries/s × ${WEBHOOKS} webhooks = ${RATE * WEBHOOKS} calls/s offered, ` +
      `for ${WARMUP_SECONDS} s of warm-up then ${SECONDS} s measured`,
  );
  const total = RATE * (WARMUP_SECONDS + SECONDS);
  const started = Date.now();
  measuredFrom = started + WARMUP_SECONDS * 1000;
  let appended = 0;
  let lastAppendedAt = started;
  const messageIds: string[] = [];
  while (appended < total) {
    const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * RATE));
    const events = [];
    for (; appended < due; appended++) {
      // When this delivery was due (open loop): a late append does not make its event younger.
      const at = started + Math.floor((appended * 1000) / RATE);
      const messageId = randomUUID();
      messageIds.push(messageId);
      const to = `r${appended}@dest.example.net`;
      events.push(accepted(org.organizationId, messageId, to, at), delivered(org.organizationId, messageId, to, at));
    }
    if (events.length > 0) await store.append(events);
    lastAppendedAt = Date.now();
    // The next tick on the schedule; at once when this append ran past it.
    const nextTick = started + Math.ceil((lastAppendedAt - started + 1) / TICK_MS) * TICK_MS;
    if (appended < total) await new Promise((resolve) => setTimeout(resolve, Math.max(0, nextTick - Date.now())));
  }
  const offeredSeconds = (lastAppendedAt - started) / 1000;
  const expected = total * WEBHOOKS;
  const deadline = Date.now() + DRAIN_MS;
  while (received < expected && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  const cpu = cpuMs(webhooks) - cpuBefore;
  const ownCpu = process.cpuUsage(ownCpuBefore);

  latencies.sort((a, b) => a - b);
  warmUpLatencies.sort((a, b) => a - b);
  const seconds = (lastAt - firstAt) / 1000;
  console.log(
    `offered ${(total / offeredSeconds).toFixed(0)} deliveries/s (${total} appended over ${offeredSeconds.toFixed(1)} s)`,
  );
  console.log(`calls expected ${expected}, received ${received} (${seen.size} distinct), duplicates ${duplicates}`);
  console.log(`signature failures ${badSignatures}, errors and warnings logged by the webhooks process ${errors}`);
  console.log(
    `warm-up (first ${WARMUP_SECONDS} s, ${warmUpLatencies.length} calls, not in the figures below): event→call ` +
      `p50 ${percentile(warmUpLatencies, 50)} ms, p99 ${percentile(warmUpLatencies, 99)} ms, max ${warmUpLatencies.at(-1)} ms`,
  );
  console.log(`calls/s ${(measured / seconds).toFixed(0)} (${measured} calls over ${seconds.toFixed(1)} s)`);
  console.log(
    `event→call p50 ${percentile(latencies, 50)} ms, p90 ${percentile(latencies, 90)} ms, ` +
      `p99 ${percentile(latencies, 99)} ms, max ${latencies.at(-1)} ms`,
  );
  console.log(`webhooks process CPU ${(cpu / Math.max(1, received)).toFixed(3)} ms per call`);
  console.log(
    `bench process (receiver, appends) CPU ${((ownCpu.user + ownCpu.system) / 1000 / Math.max(1, received)).toFixed(3)} ms per call`,
  );

  webhooks.kill('SIGTERM');
  await new Promise((resolve) => webhooks.once('exit', resolve));
  await printStages(store, addresses.topics.webhookCalls, arrivals);
  server.closeAllConnections();
  server.close();
  const topics = [
    ...Object.values(addresses.topics),
    ...POSTMARK_RETRY_DELAYS_MS.map((_, i) => webhookRetryTopic(addresses.topics, i + 1)),
  ];
  await withAdmin(store.kafka, async (admin) => {
    const existing = new Set(await admin.listTopics());
    const mine = [...topics, ...topics.map(deadLetterTopicOf)].filter((topic) => existing.has(topic));
    await admin.deleteTopics({ topics: mine }).catch(() => undefined);
  });
  await removeRedisState(redis, org.organizationId, messageIds, [...seen]);
  await store.disconnect();
  redis.disconnect();
}

/**
 * Where the time went, read after the run (so reading costs the run nothing): each call's first record on
 * webhooks.calls carries when the dispatcher appended it (the record's timestamp). Dispatcher = event → call
 * appended (fetching the event, reading the webhooks and summaries, deciding); caller = appended → received
 * (fetching the call, waiting for the endpoint's turn, signing, the HTTP call).
 */
async function printStages(
  store: EventStore,
  callsTopic: string,
  arrivals: Map<string, { deliveredAt: number; receivedAt: number }>,
): Promise<void> {
  const dispatcher: number[] = [];
  const caller: number[] = [];
  await store.readAll([callsTopic], async (items) => {
    for (const { event, message } of items) {
      if (!event || !isWebhookCallScheduled(event)) continue;
      const arrival = arrivals.get(event.data.callId);
      if (!arrival) continue;
      const appendedAt = Number(message.timestamp);
      dispatcher.push(appendedAt - arrival.deliveredAt);
      caller.push(arrival.receivedAt - appendedAt);
    }
  });
  dispatcher.sort((a, b) => a - b);
  caller.sort((a, b) => a - b);
  const figures = (sorted: number[]) =>
    `p50 ${percentile(sorted, 50)} ms, p90 ${percentile(sorted, 90)} ms, p99 ${percentile(sorted, 99)} ms, ` +
    `max ${sorted.at(-1)} ms`;
  console.log(`stages (${caller.length} calls): dispatcher (event → call appended) ${figures(dispatcher)}`);
  console.log(`                    caller (call appended → received) ${figures(caller)}`);
}

/**
 * The dispatcher's working state of this run, removed so the benchmark leaves Redis as it found it: the keys under
 * the organization (call records, delivery logs, failing marks), and those named by the messages and the calls alone.
 */
async function removeRedisState(
  redis: Redis,
  organizationId: string,
  messageIds: string[],
  callIds: string[],
): Promise<void> {
  const named = [
    ...messageIds.map((id) => `sl:webhooks:message:${id}`),
    ...callIds.map((id) => `sl:webhooks:answered:${id}`),
    ...(await scanKeys(redis, `sl:*${organizationId}*`)),
  ];
  await unlinkKeys(redis, named);
}

await main();
process.exit(0);
