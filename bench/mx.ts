/**
 * npm run bench:mx [-- DSNS [CONNECTIONS]] — mail that comes back, on this machine (loopback only, about a minute).
 *
 * Runs the MX (apps/mx/src/main.ts) and the returns reader (apps/returns/src/main.ts) as their own processes, as
 * `npm start` runs them, on topics, consumer groups and a ClickHouse database of this run, against the real Kafka,
 * schema registry, ClickHouse and Redis. Setup, not timed: an organization of this run with a message for every DSN
 * to send, each to one recipient, accepted, sent and delivered (their events appended straight to the run's
 * email.messages and projected into the run's activity store by the projector's activity projection, which is then
 * stopped); one DSN per message, written beforehand (infra's deliveryStatusNotification: 5.1.1, user unknown) to the
 * message's signed return path `b.<token>@bounces.sendline.dev`; and BENCH_STORE_MESSAGES messages of other
 * organizations over the 30 days before, written straight into the store, so that the store is not the run's alone.
 *
 * CONNECTIONS SMTP connections from this process send the DSNs to the MX, as a remote server does: EHLO once per
 * connection, then per DSN `MAIL FROM:<>`, `RCPT TO` and `DATA` written together (PIPELINING, which the MX announces
 * and Postfix uses; BENCH_PIPELINING=0: one command at a time), then the report. First BENCH_WARM_UP DSNs as fast as
 * the MX answers, left out of the figures (the processes' code compiled, the reader's group joined); then a phase of
 * DSNS DSNs at each rate of BENCH_RATES (each DSN due at its time on the schedule, sent by the first free
 * connection), then DSNS flat out (each connection sends its next DSN as soon as it has its answer). Meanwhile this
 * process polls the suppression view every BENCH_POLL_MS ms as a user of the API would read it: the hash's length,
 * and when it grew, one HMGET of the addresses still waiting.
 *
 * Reports, per phase:
 * - received: DSNs answered 250 per second, from the first DATA to the last 250;
 * - applied: suppressions readable per second, from the first DATA to the last one seen;
 * - DATA → 250 and DATA → suppression readable, p50 / p95 / p99 / max, from the moment this client writes `DATA`
 *   (with MAIL and RCPT when pipelining);
 * - CPU ms per DSN of the MX, the reader, this process and the services, and the machine's busy share;
 * and in all: 250s, suppressions seen, MessageHardBounced and SuppressionAdded in the run's log, mail.received's
 * dead letters (they must all be equal but the last, 0), each process's peak RSS (VmHWM).
 *
 * DSNS (default 5000; BENCH_DSNS), CONNECTIONS (20; BENCH_CONNECTIONS), BENCH_RATES (1000; comma-separated, empty for
 * none), BENCH_FLAT_OUT (1; 0 skips), BENCH_WARM_UP (500), BENCH_POLL_MS (5), BENCH_PIPELINING (1),
 * BENCH_STORE_MESSAGES (1,000,000: other organizations' messages in the activity store, over 30 days; the reader
 * looks messages up by id among them).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import type { MessageEvent } from '@sendline/domain';
import {
  ActivityQueries,
  createClickHouse,
  createRedis,
  deadLetterTopicOf,
  deliveryStatusNotification,
  EventStore,
  loadLocalServicesEnv,
  migrate,
  ReturnedMessages,
  returnPathAddress,
  returnPathKey,
  returnPathNamesFromEnv,
  secretKeyFromEnv,
  serviceAddresses,
  SuppressionView,
  topicConfigs,
  withAdmin,
  type StoredEvent,
} from '@sendline/infra';
import { startProjector } from '@sendline/projector';
import { accepted, delivered, sent } from '../test/projector/support';
import { benchTopics, cpuMs, machineCpu, ownCpuMs, peakRssMb, percentile, PROFILE_FLAGS, servicePids } from './support';
import { dataOf, SmtpClient } from './smtpClient';

const [dsnsArgument, connectionsArgument] = process.argv.slice(2);
const DSNS = Number(dsnsArgument ?? process.env.BENCH_DSNS ?? 5000);
const CONNECTIONS = Number(connectionsArgument ?? process.env.BENCH_CONNECTIONS ?? 20);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 500);
const STORE_MESSAGES = Number(process.env.BENCH_STORE_MESSAGES ?? 1_000_000);
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 5);
const PIPELINING = process.env.BENCH_PIPELINING !== '0';
const RATES = (process.env.BENCH_RATES ?? '1000').split(',').filter(Boolean).map(Number);
const FLAT_OUT = process.env.BENCH_FLAT_OUT !== '0';

const rateName = (rate: number) => (rate === Infinity ? 'flat out' : `at ${rate.toLocaleString('en')} DSNs/s offered`);
/** How long the suppressions of a phase may take to show after its last 250. */
const DRAIN_MS = 60_000;

loadLocalServicesEnv();
const run = randomUUID().slice(0, 8);
const prefix = `bench-${run}`;
const topics = benchTopics(run);
const database = `bench_mx_${run}`;
const addresses = serviceAddresses();
const store = new EventStore({
  brokers: addresses.kafkaBrokers,
  registryUrl: addresses.schemaRegistryUrl,
  clientId: 'bench-mx',
  topics,
});
const clickhouse = createClickHouse(addresses.clickhouseUrl);
const redis = createRedis(addresses.redisUrl);
const secretKey = secretKeyFromEnv();
const organizationId = randomUUID();
/** The view the reader applies to: the service's own namespace (`sl`), under this run's organization only. */
const suppressions = new SuppressionView(redis);
const children: ChildProcess[] = [];

/** One DSN to send: the return path it goes to, the recipient it suppresses, its DATA (dot-stuffed, with its end). */
interface Dsn {
  to: string;
  recipient: string;
  data: Buffer;
}

/** What the client and the poller saw of one DSN (performance.now() times). */
interface Sent {
  dataAt: number;
  answeredAt?: number;
  visibleAt?: number;
}

async function main(): Promise<void> {
  const watchdog = setTimeout(() => {
    console.error('bench:mx took over 10 minutes; cleaning up and stopping');
    void cleanUp().finally(() => process.exit(1));
  }, 10 * 60_000);
  try {
    await store.ensureTopics(topicConfigs(topics));
    await migrate(clickhouse, database);
    await otherMessages(STORE_MESSAGES);
    const dsns = await deliveredMessages(WARM_UP + DSNS * (RATES.length + (FLAT_OUT ? 1 : 0)));
    const mx = await startChild('mx', 'apps/mx/src/main.ts', 'mx listening', {
      SENDLINE_MX_PORT: '0',
      SENDLINE_MX_MAX_CONNECTIONS_PER_ADDRESS: String(Math.max(20, CONNECTIONS)),
    });
    const mxPort = Number(/"address":"[^"]*:(\d+)"/.exec(mx.line)![1]);
    const reader = await startChild('returns', 'apps/returns/src/main.ts', 'returns reader started', {
      SENDLINE_RETURNS_GROUP: `${prefix}-returns-reader`,
    });

    const phases = [...RATES, ...(FLAT_OUT ? [Infinity] : [])];
    console.log(
      `bench:mx — ${WARM_UP} warm-up DSNs, then ${DSNS} DSNs ${phases.map(rateName).join(', then ')}, from ` +
        `${CONNECTIONS} SMTP connections on loopback; the MX and the returns reader as their own processes`,
    );
    const warmUp = await phase(mxPort, dsns.slice(0, WARM_UP), Infinity);
    console.log(
      `warm-up: ${warmUp.answered} answered 250, ${warmUp.visible} suppressions readable, in ` +
        `${warmUp.seconds.toFixed(1)} s (not in the figures below)`,
    );
    const totals = { answered: warmUp.answered, visible: warmUp.visible, refused: warmUp.refused };
    const services = servicePids();
    const processes = [
      { name: 'MX', ms: () => cpuMs(mx.child) },
      { name: 'returns reader', ms: () => cpuMs(reader.child) },
      // Its own CPU only (cpuMs would add its children, the MX and the reader).
      { name: 'this process (SMTP client, poller)', ms: () => ownCpuMs() },
      ...services.map(({ name, pid }) => ({ name, ms: () => cpuMs({ pid }) })),
    ];
    for (const [i, rate] of phases.entries()) {
      const before = { cpu: processes.map((p) => p.ms()), machine: machineCpu() };
      const measured = await phase(mxPort, dsns.slice(WARM_UP + i * DSNS, WARM_UP + (i + 1) * DSNS), rate);
      const machine = machineCpu();
      const cpu = processes.map((p, j) => p.ms() - before.cpu[j]!);
      totals.answered += measured.answered;
      totals.visible += measured.visible;
      totals.refused += measured.refused;
      const { results, started } = measured;
      const answeredAt = results.flatMap((r) => (r.answeredAt === undefined ? [] : [r.answeredAt]));
      const visibleAt = results.flatMap((r) => (r.visibleAt === undefined ? [] : [r.visibleAt]));
      const toAnswer = results.flatMap((r) => (r.answeredAt === undefined ? [] : [r.answeredAt - r.dataAt]));
      const toVisible = results.flatMap((r) => (r.visibleAt === undefined ? [] : [r.visibleAt - r.dataAt]));
      const receivedSeconds = (Math.max(...answeredAt) - started) / 1000;
      const appliedSeconds = (Math.max(...visibleAt) - started) / 1000;
      const busy = (machine.busy - before.machine.busy) / Math.max(1, machine.total - before.machine.total);
      const perDsn = (ms: number) => (ms / Math.max(1, measured.answered)).toFixed(3);
      console.log(`\n${rateName(rate)}:`);
      console.log(
        `  received: ${measured.answered} answered 250 in ${receivedSeconds.toFixed(2)} s: ` +
          `${Math.round(measured.answered / receivedSeconds)} DSNs/s (first DATA → last 250)`,
      );
      console.log(
        `  applied:  ${measured.visible} suppressions readable in ${appliedSeconds.toFixed(2)} s: ` +
          `${Math.round(measured.visible / appliedSeconds)} DSNs/s (first DATA → last suppression readable)`,
      );
      console.log(`  DATA → 250                   ${figures(toAnswer)}`);
      console.log(`  DATA → suppression readable  ${figures(toVisible)}`);
      console.log(
        `  CPU ms per DSN: ${processes.map((p, j) => `${p.name} ${perDsn(cpu[j]!)}`).join(', ')}; ` +
          `machine busy ${(busy * 100).toFixed(0)}% of its ${machine.cores} cores`,
      );
    }

    const logged = await countLogged();
    const rss = { mx: peakRssMb(mx.child), reader: peakRssMb(reader.child), own: peakRssMb(process) };
    console.log(
      `\nin all (warm-up included): 250s ${totals.answered}, suppressions readable ${totals.visible}, ` +
        `MessageHardBounced in the log ${logged.hardBounced}, SuppressionAdded ${logged.suppressionsAdded}; ` +
        `not answered 250 ${totals.refused}, dead letters ${logged.deadLetters}`,
    );
    console.log(`peak RSS: MX ${rss.mx} MB, returns reader ${rss.reader} MB, this process ${rss.own} MB`);
    console.log(`errors and warnings logged: MX ${mx.problems()}, returns reader ${reader.problems()}`);
  } finally {
    clearTimeout(watchdog);
    await cleanUp();
  }
}

/**
 * `count` messages of the run's organization, accepted, sent and delivered, in the run's activity store (appended,
 * then projected by the activity projection until every one shows delivered); the DSN of each.
 */
async function deliveredMessages(count: number): Promise<Dsn[]> {
  const started = performance.now();
  const key = returnPathKey(secretKey);
  const domain = returnPathNamesFromEnv().domain;
  const at = Date.now() - 3600_000;
  const dsns: Dsn[] = [];
  const events: StoredEvent[] = [];
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const recipient = `r${i}-${run}@dest.example.net`;
    const message = accepted(organizationId, { at: at + i, to: [recipient], from: 'orders@shop.example' });
    const messageId = message.data.messageId;
    ids.push(messageId);
    events.push(...([message, sent(message), delivered(message, recipient)] satisfies MessageEvent[]));
    const to = returnPathAddress(key, { messageId, recipientIndex: 0 }, domain);
    const original = Buffer.from(
      `From: <orders@shop.example>\r\nTo: <${recipient}>\r\nSubject: Your receipt\r\n` +
        `Message-ID: <${messageId}@shop.example>\r\n\r\nThanks.\r\n`,
    );
    const raw = deliveryStatusNotification(
      {
        reportingMta: 'mx.dest.example.net',
        messageId: `${randomUUID()}@mx.dest.example.net`,
        boundary: 'b1',
        date: new Date(),
      },
      { envelopeFrom: to, arrivalDate: new Date(at + i), sourceIp: '127.0.0.1', raw: original },
      [{ address: recipient, status: '5.1.1', diagnostic: `550 5.1.1 <${recipient}>: user unknown` }],
    );
    dsns.push({ to, recipient, data: dataOf(raw) });
  }
  // Four appends at a time, each of whole messages: appends in flight together may land in any order, and a
  // message's events must land in theirs.
  const chunk = 3 * 600;
  for (let i = 0; i < events.length; i += 4 * chunk) {
    await Promise.all(
      Array.from({ length: 4 }, (_, j) => store.append(events.slice(i + j * chunk, i + (j + 1) * chunk))),
    );
  }
  const projector = await startProjector({
    store,
    redis,
    clickhouse,
    database,
    namespace: prefix,
    groupPrefix: `${prefix}-projector`,
    projections: ['activity'],
    retention: false,
    lagIntervalMs: 60_000,
    writer: { maxDelayMs: 100 },
  });
  try {
    const messages = new ReturnedMessages(new ActivityQueries(clickhouse, database, { timeoutMs: 30_000 }));
    const deadline = Date.now() + 60_000;
    for (;;) {
      let ready = 0;
      const notReady: unknown[] = [];
      for (let i = 0; i < ids.length; i += 1000) {
        const states = await messages.states(ids.slice(i, i + 1000));
        for (const id of ids.slice(i, i + 1000)) {
          const state = states.get(id);
          if (state && [...state.recipients.values()].every((r) => r.status === 'Delivered')) ready++;
          else notReady.push([id, state && [...state.recipients.entries()], state?.phase]);
        }
      }
      if (ready === ids.length) break;
      if (Date.now() > deadline)
        throw new Error(
          `only ${ready} of ${ids.length} messages delivered in the store: ${JSON.stringify(notReady.slice(0, 3))}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    await projector.stop();
  }
  console.error(
    `setup: ${count} messages delivered in the activity store (${database}) in ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return dsns;
}

/**
 * `count` messages of 1,000 other organizations in the run's activity store, spread over the 30 days before today
 * (the store's retention): what a lookup by message id reads through besides the run's own. Written straight into
 * the messages table (only the lookup reads them), in one statement.
 */
async function otherMessages(count: number): Promise<void> {
  if (count <= 0) return;
  const started = performance.now();
  const today = Math.floor(Date.now() / 86_400_000) * 86_400;
  const perDay = Math.ceil(count / 30);
  await clickhouse.command({
    query:
      `INSERT INTO ${database}.messages (organization_id, message_id, day, received_at, received_at_ms, status, ` +
      `phase, recipients, recipient_statuses, subject, version) ` +
      `SELECT concat('other-', toString(number % 1000)), toString(generateUUIDv4()), toDate(at), at, ` +
      `toUInt64(at) * 1000, 'Delivered', 'Sent', [concat('r', toString(number), '@example.net')], ['Delivered'], ` +
      `'Your receipt', 1 FROM (SELECT number, toDateTime(${today} - 86400 * (1 + intDiv(number, ${perDay})) + ` +
      `number % 86400) AS at FROM system.numbers LIMIT ${count})`,
  });
  console.error(
    `setup: ${count} messages of other organizations in the activity store in ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

/** Sends the DSNs over CONNECTIONS connections and waits until every one answered 250 shows in the view. */
async function phase(
  port: number,
  dsns: Dsn[],
  rate: number,
): Promise<{ results: Sent[]; started: number; answered: number; visible: number; refused: number; seconds: number }> {
  const results: Sent[] = dsns.map(() => ({ dataAt: NaN }));
  /** Recipients whose DSN went out (from its DATA on) and whose suppression has not shown yet. */
  const waiting = new Map<string, Sent>();
  let answered = 0;
  let visible = 0;
  let refused = 0;
  let next = 0;
  let sending = true;

  const key = suppressions.keyOf(organizationId);
  let length = await redis.hlen(key);
  const poll = async () => {
    while (sending || waiting.size > 0) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      if (waiting.size === 0) continue;
      const now = await redis.hlen(key);
      if (now === length) continue;
      length = now;
      const recipients = [...waiting.keys()];
      const values = await redis.hmget(key, ...recipients);
      const at = performance.now();
      recipients.forEach((recipient, i) => {
        if (values[i] === null) return;
        waiting.get(recipient)!.visibleAt = at;
        waiting.delete(recipient);
        visible++;
      });
    }
  };

  const connection = async () => {
    const client = await SmtpClient.open(port);
    for (let i = next++; i < dsns.length; i = next++) {
      // Paced: the i-th DSN is due i/rate seconds after the start (a connection that is late sends at once).
      const due = started + (i * 1000) / rate;
      if (due > performance.now()) await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
      const { to, recipient, data } = dsns[i]!;
      const result = results[i]!;
      // From the moment DATA is written (with MAIL and RCPT when pipelining) until the 250 to the message's end.
      const reply = await client.send(to, data, PIPELINING, () => {
        result.dataAt = performance.now();
        waiting.set(recipient, result);
      });
      if (reply.code === 250) {
        result.answeredAt = performance.now();
        answered++;
      } else {
        refused++;
        waiting.delete(recipient);
      }
    }
    await client.quit();
  };

  const started = performance.now();
  const polling = poll();
  await Promise.all(Array.from({ length: CONNECTIONS }, connection)).finally(() => {
    sending = false;
  });
  const drained = Promise.race([polling, new Promise((resolve) => setTimeout(resolve, DRAIN_MS))]);
  await drained;
  if (waiting.size > 0)
    console.error(`${waiting.size} suppressions not readable ${DRAIN_MS / 1000} s after the last 250`);
  waiting.clear();
  await polling;
  return { results, started, answered, visible, refused, seconds: (performance.now() - started) / 1000 };
}

/** p50 / p95 / p99 / max of durations in ms. */
function figures(durations: number[]): string {
  const sorted = [...durations].sort((a, b) => a - b);
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  return (
    `p50 ${ms(percentile(sorted, 50))}, p95 ${ms(percentile(sorted, 95))}, p99 ${ms(percentile(sorted, 99))}, ` +
    `max ${ms(sorted.at(-1) ?? NaN)} (${sorted.length} DSNs)`
  );
}

/** Starts an app's process on the run's topics and database; resolves with the log line that says it is ready. */
async function startChild(
  name: string,
  entry: string,
  ready: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; line: string; problems: () => number }> {
  let problems = 0;
  const child = spawn(process.execPath, [...PROFILE_FLAGS, '--import', 'tsx', entry], {
    env: {
      ...process.env,
      SENDLINE_TOPIC_PREFIX: prefix,
      CLICKHOUSE_DATABASE: database,
      SENDLINE_DEV: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the ${name} process exited (${code})`)));
    createInterface({ input: child.stdout! }).on('line', (text) => {
      if (text.includes(`"msg":"${ready}"`)) resolve(text);
      // pino's levels: 40 warn, 50 error, 60 fatal. The first few are shown, so a slow run says why.
      if (/"level":(40|50|60)/.test(text) && problems++ < 5) console.error(`${name}: ${text}`);
    });
  });
  return { child, line, problems: () => problems };
}

/** The events the reader appended for the run's organization, and the mail it could not match. */
async function countLogged(): Promise<{ hardBounced: number; suppressionsAdded: number; deadLetters: number }> {
  let hardBounced = 0;
  let suppressionsAdded = 0;
  await store.readAll([topics.messages, topics.suppressions], async (items) => {
    for (const { event } of items) {
      if (event?.metadata.organizationId !== organizationId) continue;
      if (event.type === 'MessageHardBounced') hardBounced++;
      if (event.type === 'SuppressionAdded') suppressionsAdded++;
    }
  });
  const deadLetters = await withAdmin(store.kafka, async (admin) => {
    const topic = deadLetterTopicOf(topics.received);
    if (!(await admin.listTopics()).includes(topic)) return 0;
    return (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  });
  return { hardBounced, suppressionsAdded, deadLetters };
}

/** Stops the apps and removes what the run made: topics, groups, the database, the suppressions of its organization. */
async function cleanUp(): Promise<void> {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null) continue;
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  await withAdmin(store.kafka, async (admin) => {
    const all = Object.values(topics);
    const existing = new Set(await admin.listTopics());
    const mine = [...all, ...all.map(deadLetterTopicOf)].filter((topic) => existing.has(topic));
    await admin.deleteTopics({ topics: mine }).catch(() => undefined);
    const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith(prefix));
    if (groups.length > 0) await admin.deleteGroups(groups).catch(() => undefined);
  }).catch((error: unknown) => console.error('topics and groups not removed:', error));
  await clickhouse.command({ query: `DROP DATABASE IF EXISTS ${database}` });
  await redis.del(suppressions.keyOf(organizationId));
  await redis.srem(suppressions.organizationsKey, organizationId);
  await store.disconnect();
  await clickhouse.close();
  redis.disconnect();
}

await main();
process.exit(0);
