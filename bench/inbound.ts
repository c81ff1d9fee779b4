/**
 * npm run bench:inbound [-- MESSAGES [RATE]] — inbound mail, received → posted to a loopback hook, on this machine.
 *
 * Runs the MX (apps/mx/src/main.ts), the inbound reader (apps/inbound/src/main.ts) and the webhooks
 * (apps/webhooks/src/main.ts: their caller posts the inbound hook's calls) as their own processes, as `npm start` runs
 * them, on topics and consumer groups of this run (`bench-<run>.…`: a running `npm start` never reads them), against
 * the real Kafka, schema registry and Redis (the inbound view is not projected: it is off the path a message takes to
 * the hook). The reader checks SPF, DKIM and DMARC for real, against a loopback DNS server of this run that knows no
 * name (each lookup answered at once: their CPU is in the figures, the network's time is not). One organization of
 * this run, in the accounts view the apps read (removed at the end), has an inbound address and its InboundHookUrl on
 * a loopback HTTP server of this process answering 200. CONNECTIONS SMTP connections from this process send MESSAGES
 * messages of about 20 KB (a text part and one attachment, built beforehand with nodemailer's composer, not timed) to
 * the inbound address, as a remote server does: EHLO once per connection, then per message MAIL FROM, RCPT TO and
 * DATA written together (PIPELINING, which the MX announces and Postfix uses; BENCH_PIPELINING=0: one command at a
 * time), then the message; the i-th message is due i/RATE s after the start and sent by the first free connection.
 * Every figure counts from the moment a message was due, so a message waiting for a free connection (the MX
 * answering slowly) waits in the figures.
 *
 * Reports: messages posted per second (first due → last post); due → 250, the MX's own append (end of DATA → 250,
 * its log's appendMs), due → recorded by the reader (its log line, by the received id of the 250), due → posted,
 * p50 / p95 / p99 / max; each message posted once (none twice, none missing); CPU ms per message of the MX, the
 * reader, the webhooks, this process (client, hook, reading the apps' logs) and the services, and the machine's busy
 * share; each process's peak RSS (VmHWM). On a machine shared with other work the wall-clock figures move with it;
 * the CPU per message much less.
 *
 * MESSAGES (default 5000; BENCH_MESSAGES), RATE (500 per second; BENCH_RATE), BENCH_CONNECTIONS (20),
 * BENCH_PIPELINING (1), BENCH_WARM_UP (200 messages first, left out of the figures), BENCH_READERS (1: inbound reader
 * processes in one consumer group, sharing mail.received's partitions), BENCH_PROFILE=<folder> (each app writes a V8
 * CPU profile there when it exits).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import MailComposer from 'nodemailer/lib/mail-composer';
import {
  AccountsView,
  createRedis,
  DEFAULT_INBOUND_DOMAIN,
  EventStore,
  inboundCallIdOf,
  inboundHashOf,
  inboundMessageIdOf,
  loadLocalServicesEnv,
  MemoryZone,
  secretKeyFromEnv,
  serviceAddresses,
  startDnsServer,
  topicConfigs,
  webhookRetryTopic,
  withAdmin,
} from '@sendline/infra';
import { WEBHOOKS_NODE_FLAGS } from '@sendline/webhooks';
import { benchTopics, cpuMs, machineCpu, ownCpuMs, peakRssMb, percentile, PROFILE_FLAGS, servicePids } from './support';
import { inboundOrganization } from '../test/support/receiving';
import { dataOf, SmtpClient } from './smtpClient';

const [messagesArgument, rateArgument] = process.argv.slice(2);
const MESSAGES = Number(messagesArgument ?? process.env.BENCH_MESSAGES ?? 5000);
const RATE = Number(rateArgument ?? process.env.BENCH_RATE ?? 500);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 200);
const PIPELINING = process.env.BENCH_PIPELINING !== '0';
/** Inbound reader processes, one consumer group: they share mail.received's partitions. */
const READERS = Math.max(1, Number(process.env.BENCH_READERS ?? 1));
/** How long the posts of a phase may take after its last 250. */
const DRAIN_MS = 120_000;

loadLocalServicesEnv();
const run = randomUUID().slice(0, 8);
const prefix = `bench-${run}`;
const addresses = serviceAddresses();
const topics = benchTopics(run);
const store = new EventStore({
  brokers: addresses.kafkaBrokers,
  registryUrl: addresses.schemaRegistryUrl,
  clientId: 'bench-inbound',
  topics,
});
const redis = createRedis(addresses.redisUrl);
/** The accounts view the apps read (the service's own namespace), under this run's organization only. */
const accounts = new AccountsView(redis);
const secretKey = secretKeyFromEnv();
const inboundDomain = DEFAULT_INBOUND_DOMAIN;
const organizationId = `bench-inbound-${run}`;
const inboundHash = inboundHashOf(organizationId, secretKey);
const children: ChildProcess[] = [];

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
/** The received id of every message answered 250 (the run's delivery log in Redis is removed by them at the end). */
const allReceivedIds = new Set<string>();
/** When the reader logged each received id recorded. */
const recorded = new Map<string, number>();
/** The MX's append of each received id: end of DATA → Kafka's acknowledgement, ms (its log's appendMs). */
const appendMs = new Map<string, number>();

async function main(): Promise<void> {
  const watchdog = setTimeout(() => {
    console.error('bench:inbound took over 15 minutes; cleaning up and stopping');
    void cleanUp().finally(() => process.exit(1));
  }, 15 * 60_000);
  const dns = await startDnsServer({ zone: new MemoryZone() });
  try {
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/inbound`;
    await store.ensureTopics(topicConfigs(topics));
    await inboundOrganization(accounts, { organizationId, name: 'Bench', inboundHash, hookUrl, secretKey });

    const common = { SENDLINE_DNS_SERVERS: dns.address, SENDLINE_INBOUND_DOMAIN: inboundDomain };
    const mx = await startChild('mx', 'apps/mx/src/main.ts', 'mx listening', {
      ...common,
      SENDLINE_MX_PORT: '0',
      SENDLINE_MX_MAX_CONNECTIONS_PER_ADDRESS: String(Math.max(20, CONNECTIONS)),
    });
    const mxAddress = /"address":"([^"]+)"/.exec(mx.line)![1]!;
    createInterface({ input: mx.child.stdout! }).on('line', (text) => {
      if (!text.includes('"msg":"mail received"')) return;
      const logged = JSON.parse(text) as { receivedId: string; appendMs: number };
      appendMs.set(logged.receivedId, logged.appendMs);
    });
    const readers = [];
    for (let i = 0; i < READERS; i++) {
      const reader = await startChild('inbound', 'apps/inbound/src/main.ts', 'inbound reader started', {
        ...common,
        SENDLINE_INBOUND_GROUP: `${prefix}-inbound-reader`,
      });
      createInterface({ input: reader.child.stdout! }).on('line', (text) => {
        if (!text.includes('"msg":"inbound message recorded"')) return;
        const receivedId = (JSON.parse(text) as { receivedId: string }).receivedId;
        if (!recorded.has(receivedId)) recorded.set(receivedId, performance.now());
      });
      readers.push(reader);
    }
    const webhooks = await startChild(
      'webhooks',
      'apps/webhooks/src/main.ts',
      'webhooks started',
      {
        ...common,
        SENDLINE_WEBHOOKS_GROUP: `${prefix}-webhooks-dispatcher`,
        SENDLINE_WEBHOOKS_CALLER_GROUP: `${prefix}-webhooks-calls`,
        SENDLINE_WEBHOOKS_NOTICES_GROUP: `${prefix}-webhooks-notices`,
        SENDLINE_WEBHOOKS_START: 'earliest',
        SENDLINE_WEBHOOK_ALLOW_PRIVATE: '1',
      },
      WEBHOOKS_NODE_FLAGS,
    );

    const port = Number(mxAddress.slice(mxAddress.lastIndexOf(':') + 1));
    console.log(
      `bench:inbound — ${WARM_UP} warm-up messages, then ${MESSAGES} messages of ~20 KB (one attachment) offered ` +
        `at ${RATE}/s over ${CONNECTIONS} SMTP connections` +
        `${PIPELINING ? ' (pipelining)' : ''}; the MX, the inbound reader and the webhooks as their ` +
        `own processes${READERS > 1 ? ` (${READERS} inbound readers, one consumer group)` : ''}`,
    );
    const warmUp = await phase(port, await messagesOf('warm-up', WARM_UP), RATE);
    console.log(
      `warm-up: ${warmUp.accepted} answered 250, ${warmUp.posted} posted in ${warmUp.seconds.toFixed(1)} s ` +
        `(not in the figures below)`,
    );

    const processes = [
      { name: 'MX', ms: () => cpuMs(mx.child) },
      ...readers.map((reader, i) => ({
        name: READERS > 1 ? `inbound reader ${i + 1}` : 'inbound reader',
        ms: () => cpuMs(reader.child),
      })),
      { name: 'webhooks', ms: () => cpuMs(webhooks.child) },
      // Its own CPU only (cpuMs would add its children, the apps).
      { name: 'this process (SMTP client, hook)', ms: () => ownCpuMs() },
      ...servicePids().map(({ name, pid }) => ({ name, ms: () => cpuMs({ pid }) })),
    ];
    const measured = await messagesOf('run', MESSAGES);
    const before = { posts, cpu: processes.map((p) => p.ms()), machine: machineCpu() };
    const result = await phase(port, measured, RATE);
    const machine = machineCpu();
    const cpu = processes.map((p, j) => p.ms() - before.cpu[j]!);
    const busy = (machine.busy - before.machine.busy) / Math.max(1, machine.total - before.machine.total);
    const perMessage = (ms: number) => (ms / Math.max(1, result.posted)).toFixed(2);
    const hookCalls = posts - before.posts;
    console.log(
      [
        `250s: ${result.accepted} / ${MESSAGES}; posted: ${result.posted}; hook calls in the run: ${hookCalls} ` +
          `(one per message: ${hookCalls === result.posted && result.posted === MESSAGES})`,
        `posted per second: ${(result.posted / result.seconds).toFixed(0)} (first due → last post, ` +
          `${result.seconds.toFixed(1)} s)`,
        `due → 250 (MX, appended):                       ${spread(result.toAnswer)}`,
        `end of DATA → 250 (the MX's append):           ${spread(result.appends)}`,
        `due → recorded (inbound reader):                ${spread(result.toRecord)}`,
        `due → posted (received → posted):               ${spread(result.latencies)}`,
        `CPU ms per message: ${processes.map((p, j) => `${p.name} ${perMessage(cpu[j]!)}`).join(', ')}; ` +
          `machine busy ${(busy * 100).toFixed(0)}% of its ${machine.cores} cores`,
        `peak RSS: MX ${peakRssMb(mx.child)} MB, inbound reader ${readers.map((r) => peakRssMb(r.child)).join(' / ')} MB, webhooks ` +
          `${peakRssMb(webhooks.child)} MB, this process ${peakRssMb(process)} MB`,
        `calls sent to wait a minute on the first retry topic, warm-up included: ${await setAside()} (set aside: ` +
          `the hook backed up, over 5 s of calls waiting at its pace; or failed without reaching the hook)`,
        `errors and warnings logged: MX ${mx.problems()}, inbound reader ${readers.map((r) => r.problems()).join(' / ')}, webhooks ` +
          `${webhooks.problems()}`,
      ].join('\n'),
    );
  } finally {
    clearTimeout(watchdog);
    await dns.close();
    await cleanUp();
  }
}

const attachment = randomBytes(12 * 1024);
const text = 'Thanks for the quick answer. '.repeat(140);
const sender = 'customer@sender.example';

/** The DATA of each message of a phase, built beforehand (not timed): ~20 KB, a text part and one attachment. */
async function messagesOf(name: string, count: number): Promise<{ subject: string; data: Buffer }[]> {
  const to = `${inboundHash}+bench@${inboundDomain}`;
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const subject = `${run}-${name}-${i}`;
      const mail = new MailComposer({
        from: sender,
        to,
        subject,
        text,
        attachments: [{ filename: 'report.bin', content: attachment }],
      });
      return { subject, data: dataOf(await mail.compile().build()) };
    }),
  );
}

/**
 * Sends `count` messages, the i-th due i/RATE s after the start, each by the first free one of CONNECTIONS
 * connections (one that is late sends at once), and waits until each answered 250 is posted (or DRAIN_MS passed).
 * Each message's times count from when it was due: waiting for a free connection is in them.
 */
async function phase(port: number, messages: { subject: string; data: Buffer }[], rate: number) {
  const to = `${inboundHash}+bench@${inboundDomain}`;
  const count = messages.length;
  const due = new Map<string, number>();
  const answered = new Map<string, number>();
  const receivedIds = new Map<string, string>();
  let accepted = 0;
  let next = 0;
  const begin = performance.now();
  const connection = async () => {
    const client = await SmtpClient.open(port);
    for (let i = next++; i < count; i = next++) {
      const at = begin + (i * 1000) / rate;
      if (at > performance.now()) await new Promise((resolve) => setTimeout(resolve, at - performance.now()));
      const { subject, data } = messages[i]!;
      due.set(subject, at);
      const reply = await client.send(to, data, PIPELINING, () => undefined, sender);
      if (reply.code !== 250) {
        console.error(`${subject} refused: ${reply.code} ${reply.text}`);
        continue;
      }
      answered.set(subject, performance.now());
      accepted++;
      const queued = /queued as (\S+)/.exec(reply.text);
      if (queued) {
        receivedIds.set(subject, queued[1]!);
        allReceivedIds.add(queued[1]!);
      }
    }
    await client.quit();
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, connection));
  const deadline = Date.now() + DRAIN_MS;
  while ([...answered.keys()].some((s) => !arrived.has(s)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const since = (at: (subject: string) => number | undefined) =>
    [...due].flatMap(([s, t]) => (at(s) === undefined ? [] : [at(s)! - t])).sort((a, b) => a - b);
  const latencies = since((s) => arrived.get(s));
  const last = Math.max(...[...due.keys()].map((s) => arrived.get(s) ?? 0));
  return {
    accepted,
    posted: latencies.length,
    seconds: (last - begin) / 1000,
    latencies,
    toAnswer: since((s) => answered.get(s)),
    toRecord: since((s) => recorded.get(receivedIds.get(s) ?? '')),
    appends: [...due.keys()]
      .flatMap((s) => {
        const ms = appendMs.get(receivedIds.get(s) ?? '');
        return ms === undefined ? [] : [ms];
      })
      .sort((a, b) => a - b),
  };
}

const fmt = (ms: number) => `${Math.round(ms)} ms`;
function spread(sorted: number[]): string {
  return (
    `p50 ${fmt(percentile(sorted, 50))}, p95 ${fmt(percentile(sorted, 95))}, p99 ${fmt(percentile(sorted, 99))}, ` +
    `max ${fmt(sorted.at(-1) ?? NaN)}`
  );
}

/** Starts an app's process on the run's topics; resolves with the log line that says it is ready. */
async function startChild(
  name: string,
  entry: string,
  ready: string,
  env: Record<string, string>,
  flags: readonly string[] = [],
): Promise<{ child: ChildProcess; line: string; problems: () => number }> {
  let problems = 0;
  const child = spawn(process.execPath, [...PROFILE_FLAGS, ...flags, '--import', 'tsx', entry], {
    env: { ...process.env, SENDLINE_TOPIC_PREFIX: prefix, SENDLINE_DEV: '1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let problem = (text: string) => /"level":(40|50|60)\b/.test(text);
  if (name === 'webhooks') problem = (text: string) => /"level":"(warn|error)"/.test(text);
  const line = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the ${name} process exited (${code})`)));
    createInterface({ input: child.stdout! }).on('line', (text) => {
      if (text.includes(`"msg":"${ready}"`) || text.includes(`"message":"${ready}"`)) resolve(text);
      // The first few warnings and errors are shown, so a slow run says why.
      if (problem(text) && problems++ < 5) console.error(`${name}: ${text}`);
    });
  });
  return { child, line, problems: () => problems };
}

/** The records on the first retry topic: calls set aside, or failed before the hook answered (it answers 200). */
async function setAside(): Promise<number> {
  return withAdmin(store.kafka, async (admin) => {
    const topic = webhookRetryTopic(topics, 1);
    if (!(await admin.listTopics()).includes(topic)) return 0;
    return (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  });
}

/** Stops the apps and removes what the run made: topics, groups, the organization in the accounts view. */
async function cleanUp(): Promise<void> {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null) continue;
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  await new Promise<void>((resolve) => hook.close(() => resolve()));
  await withAdmin(store.kafka, async (admin) => {
    const mine = (await admin.listTopics()).filter((topic) => topic.startsWith(`${prefix}.`));
    if (mine.length > 0) await admin.deleteTopics({ topics: mine }).catch(() => undefined);
    const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith(prefix));
    if (groups.length > 0) await admin.deleteGroups(groups).catch(() => undefined);
  }).catch((error: unknown) => console.error('topics and groups not removed:', error));
  // The organization, and the webhooks' delivery log of its calls (each call's body is kept there 30 days: some
  // 30 kB a message), found by SCAN, which does not hold up the shared Redis as KEYS does.
  const keys = [...allReceivedIds].map(
    (id) => `sl:webhooks:answered:${inboundCallIdOf(inboundMessageIdOf(id, organizationId), false)}`,
  );
  for (const match of [`${accounts.organizationKey(organizationId)}*`, `sl:webhooks:*:${organizationId}:*`]) {
    for await (const found of redis.scanStream({ match, count: 1000 })) keys.push(...(found as string[]));
  }
  for (let i = 0; i < keys.length; i += 500) await redis.unlink(...keys.slice(i, i + 500));
  await redis.hdel(accounts.inboundAddressesKey, inboundHash);
  await redis.srem(accounts.organizationsKey, organizationId);
  await store.disconnect();
  redis.disconnect();
}

await main();
process.exit(0);
