/**
 * npm run bench:e2e — end to end, from the API to a mail server, on this machine (loopback only, about
 * three minutes at most).
 *
 * Runs the real API (apps/api/src/main.ts), the sender (its library as a process, delivering only the
 * bench's fresh organization) and the test mail server, each as its own process, on the real Kafka,
 * schema registry and Redis. Each phase gets a sender of its own, on fresh consumer groups that start at
 * the topics' ends, so a phase never inherits the previous one's backlog. The mail server offers
 * STARTTLS and checks the DKIM signature of every 10th message (it stands for the recipients' servers,
 * which are not what is measured).
 *
 * Per phase:
 * - accepted/s: messages the API accepted per second while the phase sent;
 * - delivered/s: the phase's messages delivered (MessageDelivered in Kafka) per second, from the
 *   phase's first send to its last delivery;
 * - Accepted→Delivered p50 / p99: MessageDelivered.occurredAt − MessageAccepted.submittedAt (occurredAt is when
 *   the mail server said 250; "where the time went" also shows when the Delivered event reached Kafka);
 * - delivered: how many of the phase's messages were delivered within its drain time (15 s);
 * - CPU ms per message of the API, the sender and the mail server processes (from /proc).
 *
 * Phases: 200 msg/s and 1,000 msg/s (open loop: single POST /v1/email requests leave on schedule
 * whatever the answers do), then the highest sustainable rate: the API driven as fast as it accepts
 * (batches of 50 on 8 connections); the sender's delivered/s there is the rate it sustains.
 *
 * The whole path (API, Kafka, mail server) is warmed first with BENCH_WARM_UP_S (30) seconds of 100 msg/s, unmeasured.
 * Each phase's sender is warmed first: it gets BENCH_SENDER_WARM_UP_S (15) seconds of its phase's rate (the flat-out
 * phase's: 100 msg/s), unmeasured, and delivers them before the phase starts (`BENCH_SENDER_WARM_UP_S=0` measures a
 * sender from its start).
 *
 * BENCH_PHASE_S (15), BENCH_RATES ("200,1000"; empty: none), BENCH_PROFILE (a folder: CPU profiles of the processes, and the
 * sender's CPU per step from its profile: bench/cpuSteps.ts), BENCH_FLAT_OUT=0 (no flat-out phase), BENCH_PEER=postfix
 * (Postfix + OpenDKIM as a reference: bench/postfix.ts; installs Debian's packages when missing).
 *
 * After the phases, references measured in the same run (bench/references.ts) are printed in one table beside the
 * sender's figures: compose + DKIM-sign in a loop, nodemailer's pool sending pre-signed messages to the mail server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import {
  positionNewGroup,
  AccountsView,
  composeMessage,
  createRedis,
  decodeBatch,
  decodedEvents,
  DkimKeys,
  dkimRecordsFromMap,
  dkimRecordValue,
  EventStore,
  loadLocalServicesEnv,
  deleteKeys,
  secretKeyFromEnv,
  serviceAddresses,
  signMessage,
  TestMailServer,
  topicConfigs,
} from '@sendline/infra';
import { senderConfigFromEnv, type SenderConfig } from '@sendline/sender';
import { createTestOrganization } from '../test/support/api';
import type { MessageAcceptedData } from '@sendline/domain';
import { cpuBySteps, perMessage } from './cpuSteps';
import { postfixReference } from './postfix';
import { composeAndSignLoop, presignedToSink, type ReferenceRow } from './references';
import { cpuMs, percentile, PROFILE_FLAGS, waitForHttp } from './support';

const PHASE_S = Number(process.env.BENCH_PHASE_S ?? 15);
const RATES = (process.env.BENCH_RATES ?? '200,1000').split(',').filter(Boolean).map(Number);
/**
 * Seconds of the phase's own traffic each phase's fresh sender gets, and delivers, before the phase is measured. At
 * the phase's rate, not less: V8 optimises what runs hot at that rate (the API's second worker, which a slower
 * warm-up barely reached, and the sender's paths for larger batches). After 5 s at 100/s, perf (every process,
 * CPU-clock samples) found V8's optimising compiler taking 20% of the machine's CPU in the first 12 s of a 300/s
 * phase on the targets' CPU budget, and 8% after 20 s.
 */
const SENDER_WARM_UP_S = Number(process.env.BENCH_SENDER_WARM_UP_S ?? 15);
/**
 * Seconds of 100 msg/s through the whole path before the first phase, unmeasured: the services were usually just
 * started (`npm run bench:e2e` starts them), and a fresh Kafka spends about half its CPU in its JIT compiler for the
 * first minutes (JFR's per-thread CPU over a 100/s run: its compiler threads about three times its request
 * handlers). A broker in production has long been warm.
 */
const WARM_UP_S = Number(process.env.BENCH_WARM_UP_S ?? 30);
const API_PORT = 3931;
/** The events the bench's tap reads: when each message was accepted, sent and delivered. */
const TAP_TYPES: ReadonlySet<string> = new Set(['MessageAccepted', 'MessageSent', 'MessageDelivered']);

// ── The mail server, as a child process of the bench ────────────────────────────────────────────────
if (process.argv.includes('--mail-server')) {
  let received = 0;
  /** Of them, relayed by Postfix (a Received field; the sender and the pre-signed reference send directly). */
  let relayedByPostfix = 0;
  /** Messages whose Message-ID came before from the same side (a client that re-sent one), by side. */
  const seen = new Set<string>();
  const receivedTwice: Record<string, number> = {};
  /** Bounces: an empty envelope sender. */
  let bounces = 0;
  let dkimChecked = 0;
  let dkimFailures = 0;
  /** Failures by who sent the message (Postfix adds a Received field, the sender none) and by verdict. */
  const dkimFailuresBy: Record<string, number> = {};
  const server = await new TestMailServer({
    dkimRecords: dkimRecordsFromMap(JSON.parse(process.env.BENCH_DKIM_RECORDS ?? '{}') as Record<string, string>),
    // The receiving side is not what is measured: it checks every 10th message's signature.
    verifyDkim: 10,
    keepRaw: false,
    maxKept: 0,
    onMessage: (message) => {
      received++;
      if (message.envelopeFrom === '') bounces++;
      // Postfix relays the messages the pre-signed reference sent before it (same Message-IDs): counted apart.
      const relayed = message.headers.some((header) => header.name.toLowerCase() === 'received');
      const source = relayed ? 'Postfix' : 'direct';
      if (relayed) relayedByPostfix++;
      if (message.messageId !== undefined) {
        const key = `${source} ${message.messageId}`;
        if (seen.has(key)) receivedTwice[source] = (receivedTwice[source] ?? 0) + 1;
        else seen.add(key);
      }
      if (message.dkim.result === 'unchecked') return;
      dkimChecked++;
      if (message.dkim.result === 'pass') return;
      dkimFailures++;
      const comment = message.dkim.comment ? ` (${message.dkim.comment})` : '';
      const kind = `${relayed ? 'Postfix' : 'sender'} ${message.dkim.result}${comment}`;
      dkimFailuresBy[kind] = (dkimFailuresBy[kind] ?? 0) + 1;
    },
  }).start();
  process.send!({ ready: true, port: server.port });
  setInterval(
    () =>
      process.send!({ received, relayedByPostfix, receivedTwice, bounces, dkimChecked, dkimFailures, dkimFailuresBy }),
    250,
  );
  process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)));
} else {
  await main();
  process.exit(0);
}

/** Counts by kind as one line: "503: 2, ECONNRESET: 1". */
function byKind(counts: Iterable<readonly [string, number]>): string {
  return [...counts].map(([kind, count]) => `${kind}: ${count}`).join(', ');
}

function child(script: string, args: string[], env: Record<string, string>, ipc = false): ChildProcess {
  return spawn(process.execPath, [...PROFILE_FLAGS, '--import', 'tsx', script, ...args], {
    env: { ...process.env, ...env },
    stdio: ipc ? ['ignore', 'inherit', 'inherit', 'ipc'] : ['ignore', 'pipe', 'inherit'],
  });
}

async function main(): Promise<void> {
  loadLocalServicesEnv();
  // Every process of this run (API, senders) works on topics of its own, so a running `npm start` never
  // delivers the benchmark's messages (children inherit the variable).
  const run = randomUUID().slice(0, 8);
  process.env.SENDLINE_TOPIC_PREFIX = `bench-${run}`;
  const addresses = serviceAddresses();
  const redis = createRedis(addresses.redisUrl);
  const accounts = new AccountsView(redis);
  const store = new EventStore({
    brokers: addresses.kafkaBrokers,
    registryUrl: addresses.schemaRegistryUrl,
    clientId: 'bench-e2e',
    topics: addresses.topics,
  });
  await store.ensureTopics(topicConfigs(addresses.topics));
  const org = await createTestOrganization({ store, accounts });
  const domainState = (await accounts.domain(org.organizationId, org.domain))!;
  const dkimRecords = {
    [`${domainState.dkimSelector}._domainkey.${org.domain}`]: dkimRecordValue(domainState.dkimPublicKey),
  };

  // The services' processes when this machine runs them (infra/local's pid files: kafka, or kafka-1… for several
  // brokers), for the CPU columns; '-' when they run elsewhere.
  const runDir = `${process.env.SENDLINE_LOCAL_DIR ?? '.local'}/run`;
  const localPids = (name: RegExp) => {
    try {
      const files = readdirSync(runDir).filter((file) => name.test(file));
      return files.map((file) => ({ pid: Number(readFileSync(`${runDir}/${file}`, 'utf8')) }));
    } catch {
      return [];
    }
  };
  const [kafka, redisServer] = [localPids(/^kafka(-\d+)?\.pid$/), localPids(/^redis\.pid$/)];
  const cpuMsOfAll = (pids: { pid: number }[]) => (pids.length === 0 ? NaN : pids.reduce((ms, p) => ms + cpuMs(p), 0));
  /** This process: the load generator and the tap. */
  const ownCpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const processes: ChildProcess[] = [];
  const mail = child('bench/e2e.ts', ['--mail-server'], { BENCH_DKIM_RECORDS: JSON.stringify(dkimRecords) }, true);
  processes.push(mail);
  const mailCounts = {
    received: 0,
    relayedByPostfix: 0,
    receivedTwice: {} as Record<string, number>,
    bounces: 0,
    dkimChecked: 0,
    dkimFailures: 0,
    dkimFailuresBy: {} as Record<string, number>,
  };
  const mailPort = await new Promise<number>((resolve) => {
    mail.on('message', (m: { ready?: boolean; port?: number; received?: number }) => {
      if (m.ready) resolve(m.port!);
      if (m.received !== undefined) Object.assign(mailCounts, m);
    });
  });

  const api = child('apps/api/src/main.ts', [], { SENDLINE_API_PORT: String(API_PORT), LOG_LEVEL: 'warn' });
  processes.push(api);

  /** A sender process on consumer groups of its own that start at the topics' ends (each phase gets a fresh one). */
  let senders = 0;
  /** What each sender said when it stopped (its stats: where a message's time went, step by step). */
  const stoppedStats = new Map<ChildProcess, { steps?: Record<string, number>; runs?: number; messages?: number }>();
  const startSender = async (): Promise<ChildProcess> => {
    const config: SenderConfig = {
      ...senderConfigFromEnv({}),
      groupId: `bench-sender-${run}-${++senders}`,
      retryGroupId: `bench-sender-retries-${run}-${senders}`,
      startNewGroupsAt: 'latest',
      relay: { host: '127.0.0.1', port: mailPort },
      heloName: 'bench.sendline.test',
      sessionTimeoutMs: 30_000,
      poolSize: 24,
    };
    const sender = child('test/sender/fixtures/senderProcess.ts', [], {
      SENDER_FIXTURE: JSON.stringify({ config, organizations: [org.organizationId] }),
    });
    processes.push(sender);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the sender did not start')), 60_000);
      createInterface({ input: sender.stdout! }).on('line', (line) => {
        if (line.startsWith('stopped ')) stoppedStats.set(sender, JSON.parse(line.slice('stopped '.length)));
        if (line === 'ready') {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    return sender;
  };
  const stopProcess = async (p: ChildProcess) => {
    if (p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((resolve) => p.once('exit', resolve));
    p.kill('SIGTERM');
    // Writing a CPU profile at exit takes a few seconds more.
    const timer = setTimeout(() => p.kill('SIGKILL'), process.env.BENCH_PROFILE ? 30_000 : 5000);
    await exited;
    clearTimeout(timer);
  };

  try {
    await waitForHttp(`http://127.0.0.1:${API_PORT}/healthz`);

    // Accepted and Delivered times of the bench's messages, read from email.messages.
    const acceptedAt = new Map<string, number>();
    const deliveredAt = new Map<string, number>();
    // For where the time went: when the API's MessageAccepted reached Kafka (its record's timestamp), and when the
    // sender decided MessageSent (just before its SMTP transactions).
    const appendedAt = new Map<string, number>();
    const sentAt = new Map<string, number>();
    // And when MessageDelivered reached Kafka (its record's timestamp): from then on the activity and webhooks see it.
    const deliveredAppendedAt = new Map<string, number>();
    const tapGroup = `bench-tap-${run}`;
    await positionNewGroup(store, tapGroup, [store.topics.messages], 'latest');
    // The tap reads event times, not arrival times: it fetches twice a second at most and commits nothing, so its
    // own requests (a fetch and a commit per batch at first, as many as the sender's) do not load the broker the
    // measured processes share.
    const tap = store.kafka.consumer({
      groupId: tapGroup,
      minBytes: 16 * 1024 * 1024,
      maxWaitTimeInMs: 500,
      maxBytesPerPartition: 20 * 1024 * 1024,
    });
    await tap.connect();
    await tap.subscribe({ topics: [store.topics.messages], fromBeginning: true });
    await tap.run({
      autoCommit: false,
      partitionsConsumedConcurrently: 6,
      eachBatch: async ({ batch }) => {
        // Only these types are decoded (the header says which), to keep the tap light.
        const { items } = await decodeBatch(batch, { codec: store.codec, types: TAP_TYPES });
        for (const { event, message } of decodedEvents(items)) {
          if (event.metadata.organizationId !== org.organizationId) continue;
          const data = event.data as { messageId: string; submittedAt?: number };
          if (event.type === 'MessageAccepted') {
            acceptedAt.set(data.messageId, data.submittedAt!);
            appendedAt.set(data.messageId, Number(message.timestamp));
          } else if (event.type === 'MessageSent') {
            if (!sentAt.has(data.messageId)) sentAt.set(data.messageId, event.metadata.occurredAt);
          } else if (!deliveredAt.has(data.messageId)) {
            deliveredAt.set(data.messageId, event.metadata.occurredAt);
            deliveredAppendedAt.set(data.messageId, Number(message.timestamp));
          }
        }
      },
    });

    const agent = new Agent({ keepAlive: true, maxSockets: 96 });
    const body = (i: number) => ({
      From: `Bench <bench@${org.domain}>`,
      To: `r${i}@bench.example.net`,
      Subject: `Receipt ${i}`,
      TextBody: 'Thank you for your order. '.repeat(8),
      Tag: 'bench',
    });
    let counter = 0;
    /** Answers other than 200, by status code, and requests that got no answer, by error code. */
    const httpErrors = new Map<string, number>();
    const failed = (kind: string) => httpErrors.set(kind, (httpErrors.get(kind) ?? 0) + 1);
    /** The errors since `before`, e.g. "3 (503: 2, ECONNRESET: 1)", or "0". */
    const errorsSince = (before: Map<string, number>) => {
      const since = [...httpErrors].map(([kind, count]) => [kind, count - (before.get(kind) ?? 0)] as const);
      const counted = since.filter(([, count]) => count > 0);
      const total = counted.reduce((sum, [, count]) => sum + count, 0);
      return total === 0 ? '0' : `${total} (${byKind(counted)})`;
    };
    const post = (path: string, payload: unknown) =>
      new Promise<unknown>((resolve) => {
        const text = JSON.stringify(payload);
        const req = request(
          {
            host: '127.0.0.1',
            port: API_PORT,
            path: `/v1${path}`,
            method: 'POST',
            agent,
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(text),
              authorization: `Bearer ${org.liveKey}`,
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              if (res.statusCode !== 200) failed(String(res.statusCode));
              try {
                resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
              } catch {
                resolve(undefined);
              }
            });
          },
        );
        req.on('error', (error: NodeJS.ErrnoException) => {
          failed(error.code ?? error.message);
          resolve(undefined);
        });
        req.end(text);
      });
    const sendOne = async (ids: string[]) => {
      const answer = (await post('/email', body(counter++))) as { MessageID?: string } | undefined;
      if (answer?.MessageID) ids.push(answer.MessageID);
    };
    const sendBatch = async (ids: string[], size: number) => {
      const answer = (await post(
        '/email/batch',
        Array.from({ length: size }, () => body(counter++)),
      )) as { MessageID?: string; ErrorCode: number }[] | undefined;
      // An answer that is no list (a 503 while the API is saturated) counts as an HTTP error, not a crash.
      for (const item of Array.isArray(answer) ? answer : []) {
        if (item.MessageID && item.ErrorCode === 0) ids.push(item.MessageID);
      }
    };

    /** Open loop: `rate` messages per second for `seconds`, single sends leaving on schedule. */
    const openLoop = async (rate: number, seconds: number, ids: string[]) => {
      const start = Date.now();
      const inFlight: Promise<void>[] = [];
      let sent = 0;
      while (Date.now() - start < seconds * 1000) {
        const due = Math.floor(((Date.now() - start) / 1000) * rate);
        for (; sent < due; sent++) inFlight.push(sendOne(ids));
        await new Promise((r) => setTimeout(r, 5));
      }
      await Promise.all(inFlight);
    };
    /** Closed loop: `connections` workers posting batches of `size` as fast as the API answers. */
    const flatOut = async (seconds: number, ids: string[], connections = 8, size = 50) => {
      const end = Date.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: connections }, async () => {
          while (Date.now() < end) await sendBatch(ids, size);
        }),
      );
    };

    /** Waits until every one of `ids` was delivered, or `seconds` have passed. */
    const waitForDeliveries = async (ids: readonly string[], seconds: number) => {
      const deadline = Date.now() + seconds * 1000;
      while (Date.now() < deadline && !ids.every((id) => deliveredAt.has(id))) {
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    /** Traffic for `seconds`: the ids the API accepted are pushed to `ids`. */
    type Drive = (ids: string[], seconds: number) => Promise<void>;
    /** Drives a fresh sender for `seconds` as its phase will, and waits until it delivered all of it (at most 15 s). */
    const warmUp = async (drive: Drive, seconds: number) => {
      const ids: string[] = [];
      await drive(ids, seconds);
      await waitForDeliveries(ids, 15);
      return ids.filter((id) => deliveredAt.has(id)).length;
    };
    /** Drives `drive` for `phaseS` seconds, after `warmS` seconds of `warm` (unmeasured; by default `drive`). */
    const measure = async (
      name: string,
      offered: string,
      drive: Drive,
      phaseS: number,
      { drainS = 15, warmS = SENDER_WARM_UP_S, warm = drive }: { drainS?: number; warmS?: number; warm?: Drive } = {},
    ) => {
      const sender = await startSender();
      // A sender that has run for a while is what a customer's message meets: the phase starts once this one has
      // compiled its hot paths, opened its SMTP connections (STARTTLS) and read its keys. Unwarmed, the first 4 s
      // of a 100/s phase waited 1-1.7 s (the steady state after them: 30-200 ms on average), and made its p99.
      const warmed = warmS > 0 ? await warmUp(warm, warmS) : 0;
      const ids: string[] = [];
      const errorsBefore = new Map(httpErrors);
      const cpuNow = () => [
        cpuMs(api),
        cpuMs(sender),
        cpuMs(mail),
        cpuMsOfAll(kafka),
        cpuMsOfAll(redisServer),
        ownCpuMs(),
      ];
      const cpuBefore = cpuNow();
      const startedAt = Date.now();
      await drive(ids, phaseS);
      const sentFor = (Date.now() - startedAt) / 1000;
      await waitForDeliveries(ids, drainS);
      const [apiCpu, senderCpu, mailCpu, kafkaCpu, redisCpu, benchCpu] = cpuNow().map((ms, i) => ms - cpuBefore[i]!);
      await stopProcess(sender);
      await new Promise((resolve) => setImmediate(resolve));
      stepTimes.push({ phase: name, ...stoppedStats.get(sender)?.steps });
      const profileDir = process.env.BENCH_PROFILE;
      // The main thread's profile (`CPU.<date>.<time>.<pid>.0.<n>.cpuprofile`; tsx's loader thread writes `.1.`).
      const profile =
        profileDir &&
        readdirSync(profileDir).find((file) => file.split('.')[3] === String(sender.pid) && file.split('.')[4] === '0');
      const delivered = ids.filter((id) => deliveredAt.has(id) && acceptedAt.has(id));
      const latencies = delivered.map((id) => deliveredAt.get(id)! - acceptedAt.get(id)!).sort((a, b) => a - b);
      const lastDelivery = Math.max(...delivered.map((id) => deliveredAt.get(id)!));
      const span = (lastDelivery - startedAt) / 1000;
      if (profile)
        // The profile covers the sender's whole life: its warm-up's messages count too.
        stepCpu.push({
          phase: name,
          ...perMessage(cpuBySteps(`${profileDir}/${profile}`), delivered.length + warmed),
        });
      const stage = (from: Map<string, number>, to: Map<string, number>) => {
        const times = delivered
          .filter((id) => from.has(id) && to.has(id))
          .map((id) => to.get(id)! - from.get(id)!)
          .sort((a, b) => a - b);
        return `${percentile(times, 50)} / ${percentile(times, 99)}`;
      };
      stages.push({
        phase: name,
        'API: submitted → in Kafka': stage(acceptedAt, appendedAt),
        'sender: in Kafka → Sent decided': stage(appendedAt, sentAt),
        'SMTP: Sent → 250': stage(sentAt, deliveredAt),
        'Delivered: 250 → in Kafka': stage(deliveredAt, deliveredAppendedAt),
      });
      const perMessage1 = (ms: number, count: number) =>
        count > 0 && Number.isFinite(ms) ? (ms / count).toFixed(1) : '-';
      // Messages a delivery run took at once, over the sender's whole life (its warm-up too): each run costs a
      // ledger read, two appends and a ledger write, whatever its size.
      const { runs, messages } = stoppedStats.get(sender) ?? {};
      return {
        phase: name,
        offered,
        'accepted/s': Math.round(ids.length / sentFor),
        'delivered/s': Math.round(delivered.length / span),
        delivered: `${delivered.length}/${ids.length}`,
        'p50 ms': percentile(latencies, 50),
        'p99 ms': percentile(latencies, 99),
        'http errors': errorsSince(errorsBefore),
        'CPU ms/msg api': perMessage1(apiCpu!, ids.length),
        sender: perMessage1(senderCpu!, delivered.length),
        'mail server': perMessage1(mailCpu!, delivered.length),
        kafka: perMessage1(kafkaCpu!, delivered.length),
        redis: perMessage1(redisCpu!, delivered.length),
        'load + tap': perMessage1(benchCpu!, delivered.length),
        'msgs/run': runs && messages ? (messages / runs).toFixed(1) : '-',
      };
    };

    const stepTimes: Record<string, unknown>[] = [];
    const stages: Record<string, unknown>[] = [];
    const stepCpu: Record<string, unknown>[] = [];
    // Warm-up of the API, Kafka and the mail server (JIT, connections, schema ids), not reported (WARM_UP_S).
    const at100: Drive = (ids, seconds) => openLoop(100, seconds, ids);
    await measure('warm-up', '100/s', at100, WARM_UP_S, { drainS: 5, warmS: 0 });
    const results = [];
    for (const rate of RATES) {
      results.push(
        await measure(`${rate} msg/s`, `${rate}/s single`, (ids, seconds) => openLoop(rate, seconds, ids), PHASE_S),
      );
    }
    if (process.env.BENCH_FLAT_OUT !== '0') {
      results.push(
        await measure(
          'highest sustainable',
          'as fast as accepted (batches of 50)',
          (ids, seconds) => flatOut(seconds, ids),
          PHASE_S,
          // Warmed at 100/s: flat out, the API accepts faster than a sender delivers, and the warm-up's backlog
          // would still be delivering when the phase starts.
          { warm: at100 },
        ),
      );
    }

    // References, in the same run: the floor of the CPU work and of the SMTP side (bench/references.ts).
    const referenceMessage = (i: number) =>
      ({
        messageId: randomUUID(),
        from: { email: `bench@${org.domain}`, name: 'Bench' },
        to: [{ email: `ref${i}@bench.example.net` }],
        cc: [],
        bcc: [],
        replyTo: [],
        subject: `Receipt ${i}`,
        textBody: 'Thank you for your order. '.repeat(8),
        headers: [{ name: 'X-PM-Tag', value: 'bench' }],
        attachments: [],
        activeRecipients: [`ref${i}@bench.example.net`],
        submittedAt: Date.now(),
      }) as unknown as MessageAcceptedData;
    const signingKey = await new DkimKeys(accounts, secretKeyFromEnv()).keyFor(
      org.organizationId,
      `bench@${org.domain}`,
    );
    const flat = results.at(-1)!;
    const references: ReferenceRow[] = [
      {
        reference: `the sender, ${flat.phase} (above)`,
        messages: Number(String(flat.delivered).split('/')[0]),
        'messages/s': flat['delivered/s'],
        'CPU ms/msg': flat.sender,
        note: 'API → Kafka → sender → mail server, DKIM and STARTTLS',
      },
      await composeAndSignLoop(referenceMessage, signingKey, 2000),
    ];
    const presigned = [];
    for (let i = 0; i < 3000; i++) {
      const message = referenceMessage(i);
      presigned.push({ message, raw: await signMessage(await composeMessage(message), signingKey) });
    }
    references.push(await presignedToSink(mailPort, presigned, { poolSize: 24, concurrency: 200 }));
    if (process.env.BENCH_PEER === 'postfix') {
      const unsigned = [];
      for (const { message } of presigned) unsigned.push({ message, raw: await composeMessage(message) });
      references.push(
        await postfixReference({
          relayPort: mailPort,
          domain: org.domain,
          selector: domainState.dkimSelector,
          privateKeyPem: signingKey.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
          messages: unsigned,
          relayed: () => mailCounts.relayedByPostfix,
          concurrency: 24,
        }),
      );
    }

    console.log(
      `\nbench:e2e — API → Kafka → sender → SMTP (STARTTLS; DKIM-signed, every 10th verified) on loopback, ` +
        `${PHASE_S}s per phase, ` +
        `${new Date().toISOString()}`,
    );
    console.table(results);
    console.log('where the time went, p50 / p99 ms (record timestamps and event times read from email.messages)');
    console.table(stages.filter((row) => row.phase !== 'warm-up'));
    // Printed when the sender reports where a message's time went, step by step (its stats' `steps`).
    const stepped = stepTimes.filter((row) => row.phase !== 'warm-up' && Object.keys(row).length > 1);
    if (stepped.length > 0) {
      console.log('sender: mean wall ms a message spent in each step');
      console.table(stepped);
    }
    if (stepCpu.length > 0) {
      console.log('sender: CPU ms per delivered message, per step (its V8 profile, bench/cpuSteps.ts)');
      console.table(stepCpu.filter((row) => row.phase !== 'warm-up'));
    }
    console.log('references, same run (bench/references.ts)');
    console.table(references);
    console.log(
      `mail server: ${mailCounts.received} messages received; DKIM checked on ${mailCounts.dkimChecked}, ` +
        `${mailCounts.dkimFailures} of them without a passing signature` +
        (mailCounts.dkimFailures > 0 ? ` (${byKind(Object.entries(mailCounts.dkimFailuresBy))})` : '') +
        `; received twice (a Message-ID that came before): ${byKind(Object.entries(mailCounts.receivedTwice)) || 'none'}` +
        `; ${mailCounts.bounces} bounces (empty envelope sender)`,
    );
    agent.destroy();
    // kafkajs's disconnect can wait for ever on a consumer in the middle of a fetch; a bench does not wait.
    await Promise.race([tap.disconnect(), new Promise((resolve) => setTimeout(resolve, 5000))]);
  } finally {
    await Promise.all(processes.map(stopProcess));
    // The senders' guard marks of this run's groups go with it, so a benchmark leaves Redis as it found it.
    await deleteKeys(redis, `sl:sender:bench-sender-${run}-*`);
    await store.disconnect();
    redis.disconnect();
  }
}
