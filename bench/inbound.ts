/**
 * npm run bench:inbound [-- MESSAGES [RATE]] — inbound mail, received → posted to a loopback hook, on this machine.
 *
 * Runs our MX, the inbound reader and the webhooks (their caller posts the inbound hook's calls) in this process, on
 * topics, consumer groups and a Redis namespace of this run, against the real Kafka, schema registry and Redis (the
 * inbound view is not projected: it is off the path a message takes to the hook). One organization of this run has
 * an inbound address and its InboundHookUrl on a loopback HTTP server answering 200. CONNECTIONS SMTP connections
 * (nodemailer's pool) send MESSAGES messages of about 20 KB (a text part and one attachment) to the inbound address,
 * one started every 1/RATE s; the figures count from the moment a message is handed to the SMTP client to the
 * moment the hook receives its JSON.
 *
 * Reports: messages posted per second (first send → last post), received → posted p50 / p95 / p99 / max, the 250s,
 * and each message posted once (none twice, none missing). MESSAGES (default 5000; BENCH_MESSAGES), RATE (500 per
 * second; BENCH_RATE), BENCH_CONNECTIONS (20), BENCH_WARM_UP (200 messages first, left out of the figures).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import type { AccountEvent } from '@sendline/domain';
import { InboundReader } from '@sendline/inbound';
import {
  AccountsView,
  createRedis,
  encryptSecret,
  EventStore,
  inboundHashOf,
  loadLocalServicesEnv,
  returnPathKey,
  secretKeyFromEnv,
  serviceAddresses,
  topicConfigs,
  withAdmin,
} from '@sendline/infra';
import { CachedReturnPathHosts, mxConfigFromEnv, MxServer } from '@sendline/mx';
import { Webhooks, webhooksConfigFromEnv } from '@sendline/webhooks';
import { benchTopics, percentile } from './support';

const [messagesArgument, rateArgument] = process.argv.slice(2);
const MESSAGES = Number(messagesArgument ?? process.env.BENCH_MESSAGES ?? 5000);
const RATE = Number(rateArgument ?? process.env.BENCH_RATE ?? 500);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 200);

loadLocalServicesEnv();
const run = randomUUID().slice(0, 8);
const addresses = serviceAddresses();
const topics = benchTopics(run);
const store = new EventStore({
  brokers: addresses.kafkaBrokers,
  registryUrl: addresses.schemaRegistryUrl,
  clientId: 'bench-inbound',
  topics,
});
const redis = createRedis(addresses.redisUrl);
const namespace = `bench-${run}`;
const accounts = new AccountsView(redis, namespace);
const secretKey = secretKeyFromEnv();
const inboundDomain = 'inbound.sendline.dev';

// The hook: records when each message's JSON arrived (by its Subject, the bench's own id).
const arrived = new Map<string, number>();
let posts = 0;
const hook = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    posts++;
    const subject = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { Subject: string }).Subject;
    if (!arrived.has(subject)) arrived.set(subject, performance.now());
    response.writeHead(200).end('ok');
  });
});
await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/inbound`;

await store.ensureTopics(topicConfigs(topics));
const organizationId = `bench-${run}`;
const inboundHash = inboundHashOf(organizationId, secretKey);
const metadata = (n: number) => ({
  eventId: `${organizationId}-${n}`,
  organizationId,
  occurredAt: Date.now(),
  schemaVersion: 1,
});
const setup: AccountEvent[] = [
  {
    type: 'OrganizationCreated',
    data: { organizationId, name: 'Bench', adminEmail: 'admin@bench.example' },
    metadata: metadata(0),
  },
  {
    type: 'ServerSettingsChanged',
    data: {
      inboundHash,
      inboundHookUrl: hookUrl,
      inboundDomain: '',
      inboundSpamThreshold: 0,
      rawEmailEnabled: false,
      inboundHookSigningSecretSealed: encryptSecret(`whsec_${randomBytes(32).toString('base64')}`, secretKey),
    },
    metadata: metadata(1),
  },
];
await accounts.apply(setup);

const mx = await MxServer.start({
  config: { ...mxConfigFromEnv({}), port: 0, inboundDomain },
  store,
  returnPathHosts: new CachedReturnPathHosts({ load: () => accounts.allReturnPathHosts(), ttlMs: 30_000 }),
  inboundAddresses: { organizationOf: (hash) => accounts.organizationOfInboundHash(hash) },
  tokenKey: returnPathKey(secretKey),
  logger: pino({ level: 'silent' }),
});
/** When the inbound reader had each message's records appended (by its Subject). */
const recorded = new Map<string, number>();
const inbound = await InboundReader.start({
  onRecorded: (events) => {
    const at = performance.now();
    for (const event of events) {
      if (event.type === 'InboundMessageReceived' && !recorded.has(event.data.subject))
        recorded.set(event.data.subject, at);
    }
  },
  store,
  directory: accounts,
  inboundDomain,
  mta: 'mx.bench.example',
  groupId: `bench-${run}-inbound`,
  // No DNS on the measured path: the checks' own cost is in the reader, their lookups are the network's.
  authenticate: async () => ({
    spf: 'none',
    dkim: 'none',
    dmarc: 'none',
    headers: [{ name: 'Authentication-Results', value: 'mx.bench.example; spf=none; dkim=none; dmarc=none' }],
  }),
});
const webhooks = await Webhooks.start({
  store,
  redis,
  directory: accounts,
  secretKey,
  config: {
    ...webhooksConfigFromEnv({}),
    dispatcherGroupId: `bench-${run}-dispatcher`,
    callerGroupId: `bench-${run}-calls`,
    startNewGroupsAt: 'earliest',
    allowPrivateAddresses: true,
  },
  log: () => undefined,
});

const attachment = randomBytes(12 * 1024);
const text = 'Thanks for the quick answer. '.repeat(140);
const [host, port] = mx.address.split(':');
const transport = nodemailer.createTransport({
  host,
  port: Number(port),
  secure: false,
  ignoreTLS: true,
  pool: true,
  maxConnections: CONNECTIONS,
  maxMessages: Infinity,
});
const to = `${inboundHash}+bench@${inboundDomain}`;

async function phase(name: string, count: number, rate: number) {
  const started = new Map<string, number>();
  const answered = new Map<string, number>();
  const answers: Promise<unknown>[] = [];
  let accepted = 0;
  const begin = performance.now();
  for (let i = 0; i < count; i++) {
    const due = begin + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const subject = `${name}-${i}`;
    started.set(subject, performance.now());
    answers.push(
      transport
        .sendMail({
          from: 'customer@sender.example',
          to,
          subject,
          text,
          attachments: [{ filename: 'report.bin', content: attachment }],
        })
        .then((info) => {
          answered.set(subject, performance.now());
          if (/^250 /.test(info.response)) accepted++;
        }),
    );
  }
  await Promise.all(answers);
  const deadline = Date.now() + 120_000;
  while ([...started.keys()].some((s) => !arrived.has(s)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const since = (at: Map<string, number>) =>
    [...started].flatMap(([s, t]) => (at.has(s) ? [at.get(s)! - t] : [])).sort((a, b) => a - b);
  const latencies = since(arrived);
  const last = Math.max(...[...started.keys()].map((s) => arrived.get(s) ?? 0));
  return {
    count,
    accepted,
    posted: latencies.length,
    seconds: (last - begin) / 1000,
    latencies,
    toAnswer: since(answered),
    toRecord: since(recorded),
  };
}

await phase('warm-up', WARM_UP, RATE);
const before = posts;
const result = await phase('run', MESSAGES, RATE);
const fmt = (ms: number) => `${Math.round(ms)} ms`;
const spread = (sorted: number[]) =>
  `p50 ${fmt(percentile(sorted, 50))}, p95 ${fmt(percentile(sorted, 95))}, p99 ${fmt(percentile(sorted, 99))}, max ${fmt(sorted.at(-1) ?? NaN)}`;
console.log(
  [
    `bench:inbound — ${MESSAGES} messages of ~20 KB (one attachment) offered at ${RATE}/s over ${CONNECTIONS} SMTP connections`,
    `250s: ${result.accepted} / ${MESSAGES}; posted: ${result.posted}; hook calls in the run: ${posts - before} (one per message: ${posts - before === result.posted})`,
    `posted per second: ${(result.posted / result.seconds).toFixed(0)} (first send → last post, ${result.seconds.toFixed(1)} s)`,
    `handed to SMTP → 250 (MX, appended): ${spread(result.toAnswer)}`,
    `handed to SMTP → recorded (inbound reader): ${spread(result.toRecord)}`,
    `handed to SMTP → posted (received → posted): ${spread(result.latencies)}`,
  ].join('\n'),
);

transport.close();
await webhooks.stop();
await inbound.consumer.stop();
await mx.stop();
await new Promise<void>((resolve) => hook.close(() => resolve()));
await withAdmin(store.kafka, async (admin) => {
  const mine = (await admin.listTopics()).filter((topic) => topic.startsWith(`bench-${run}.`));
  await admin.deleteTopics({ topics: mine }).catch(() => undefined);
});
const keys = await redis.keys(`${namespace}:*`);
if (keys.length > 0) await redis.del(...keys);
await store.disconnect();
redis.disconnect();
process.exit(0);
