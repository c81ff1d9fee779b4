/**
 * npm run bench:scale — the same end-to-end load (API → Kafka → sender → loopback SMTP sink) through one copy of the
 * sender and then through two copies in one consumer group, on a three-broker Kafka of the run's own; messages per
 * second, CPU per message of every process and the messages the sink received twice (by Message-ID), side by side.
 * About three minutes with the defaults on a quiet machine; loopback only.
 *
 * Kafka (three brokers, replication factor 3, min.insync.replicas 2), the schema registry and Redis are a private stack
 * (test/support/privateStack.ts) started and wiped by this run, so a running `npm start` never sees its traffic
 * (ClickHouse is the shared one; nothing here writes to it). The API (apps/api/src/main.ts, its default workers), the
 * sink and each sender copy are processes of their own. A copy is the sender's library as a process
 * (test/sender/fixtures/senderProcess.ts, as bench:e2e runs it): it opens no metrics port, so two copies on one
 * machine collide on nothing; both copies of a configuration share one consumer group (fresh for each
 * configuration, starting at the topics' ends), so Kafka splits email.messages' six partitions between them.
 *
 * Per configuration (BENCH_COPIES, default "1,2"):
 * 1. the copies start (one after the other) and join their group; BENCH_SENDER_WARM_UP_S (5) seconds of 100 msg/s are
 *    sent and delivered, unmeasured (V8 compiles the hot paths, the SMTP connections open, the group settles);
 * 2. at a fixed rate: BENCH_RATE (200) msg/s for BENCH_RATE_S (10) seconds, in batches of 10 leaving on schedule (open
 *    loop), the same for both configurations: what a second copy costs in CPU at a rate one copy handles;
 * 3. a backlog: BENCH_MESSAGES (6,000) messages sent through the API as fast as it accepts them (batches of 50 on 4
 *    connections); the API takes them within seconds, so the phase is mostly the senders draining it at the most
 *    they deliver: what a second copy adds in messages a second;
 * each phase ends when the sink has received every accepted message (or after BENCH_DRAIN_S, 60, seconds).
 *
 * Reported per phase: delivered/s (messages received at the sink ÷ first send → last message received), the CPU ms
 * per message of each process (from /proc: the API, the sender copies together, the sink, the three brokers, Redis,
 * the registry, this process), the cores the senders and the whole run used (delivered/s ≈ the run's cores ÷ its
 * CPU per message: where the path saturates the machine, the rate follows the CPU the run got), how busy the machine
 * was and how much of that was other work (processes not of this run: the machine may be shared), Redis's used
 * memory and the brokers' disk per 1,000 messages, and duplicates: messages the sink received twice (the same
 * Message-ID, `<messageId@domain>`). Per configuration: the partitions each copy was assigned, the messages each
 * delivered, the copies of a MessageAccepted the senders skipped, and each copy's peak memory.
 *
 * Before the configurations, BENCH_WARM_UP_S (15) seconds of 200 msg/s go through the whole path with a sender of
 * its own, unmeasured: the brokers were just started, and a fresh Kafka spends much of its CPU in its JIT compiler
 * for its first minutes (docs/benchmarks.md, bench:e2e). BENCH_COPIES="1,2,1,2" repeats the comparison.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import { AssignerProtocol } from 'kafkajs';
import {
  AccountsView,
  createRedis,
  dkimRecordsFromMap,
  dkimRecordValue,
  EventStore,
  loadLocalServicesEnv,
  serviceAddresses,
  TestMailServer,
  topicConfigs,
  withAdmin,
} from '@sendline/infra';
import { senderConfigFromEnv, type SenderConfig, type SenderStats } from '@sendline/sender';
import { createTestOrganization } from '../test/support/api';
import { startPrivateStack, type PrivateProcess, type PrivateStack } from '../test/support/privateStack';
import { cpuMs, waitForHttp } from './support';

const COPIES = (process.env.BENCH_COPIES ?? '1,2').split(',').filter(Boolean).map(Number);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 6000);
const WARM_UP_S = Number(process.env.BENCH_WARM_UP_S ?? 15);
const SENDER_WARM_UP_S = Number(process.env.BENCH_SENDER_WARM_UP_S ?? 5);
const DRAIN_S = Number(process.env.BENCH_DRAIN_S ?? 60);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const RATE_S = Number(process.env.BENCH_RATE_S ?? 10);
const BATCH = 50;
const CONNECTIONS = 4;
const API_PORT = 3941;

// ── The sink, as a child process: counts messages by Message-ID and reports over IPC ─────────────────────
if (process.argv.includes('--sink')) {
  const seen = new Set<string>();
  let received = 0;
  let twice = 0;
  let withoutId = 0;
  let lastAt = 0;
  const server = await new TestMailServer({
    dkimRecords: dkimRecordsFromMap(JSON.parse(process.env.BENCH_DKIM_RECORDS ?? '{}') as Record<string, string>),
    // It stands for the recipients' servers, which are not what is measured: every 10th signature checked (as in
    // bench:e2e), STARTTLS offered.
    verifyDkim: 10,
    keepRaw: false,
    maxKept: 0,
    onMessage: (message) => {
      received++;
      lastAt = Date.now();
      if (message.messageId === undefined) withoutId++;
      else if (seen.has(message.messageId)) twice++;
      else seen.add(message.messageId);
    },
  }).start();
  process.send!({ ready: true, port: server.port });
  setInterval(() => process.send!({ received, unique: seen.size, twice, withoutId, lastAt }), 100);
  process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)));
} else {
  await main();
  process.exit(0);
}

interface SinkCounts {
  received: number;
  unique: number;
  twice: number;
  withoutId: number;
  lastAt: number;
}

function child(script: string, env: Record<string, string>, ipc = false): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script, ...(ipc ? ['--sink'] : [])], {
    env: { ...process.env, ...env },
    stdio: ipc ? ['ignore', 'inherit', 'inherit', 'ipc'] : ['ignore', 'pipe', 'inherit'],
  });
}

/** The machine's CPU time so far, ms over all cores: busy (not idle or waiting on I/O) and in all. */
function machineCpuMs(): { busy: number; total: number; cores: number } {
  const lines = readFileSync('/proc/stat', 'utf8').split('\n');
  const fields = lines[0]!.split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
  const idle = fields[3]! + fields[4]!;
  // /proc/stat counts clock ticks of 10 ms.
  return { busy: (total - idle) * 10, total: total * 10, cores: lines.filter((line) => /^cpu\d/.test(line)).length };
}

/** Peak resident memory (VmHWM) of a process and its live descendants (the API's workers), MB; NaN once gone. */
function peakRssMb(pid: number | undefined): number {
  const kb = (id: number): number => {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${id}/status`, 'utf8'));
    let total = match ? Number(match[1]) : 0;
    for (const task of readdirSync(`/proc/${id}/task`)) {
      const children = readFileSync(`/proc/${id}/task/${task}/children`, 'utf8').trim();
      for (const child of children ? children.split(' ') : []) total += kb(Number(child));
    }
    return total;
  };
  try {
    return pid === undefined ? NaN : Math.round(kb(pid) / 1024);
  } catch {
    return NaN;
  }
}

function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function progress(line: string): void {
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  loadLocalServicesEnv();
  const run = randomUUID().slice(0, 8);
  progress(`bench:scale ${run}: starting a private three-broker Kafka, registry and Redis (about 30-60 s)`);
  const stack = await startPrivateStack({ name: 'bench-scale', brokers: 3, services: ['kafka', 'registry', 'redis'] });
  const processes: ChildProcess[] = [];
  const stopProcess = async (p: ChildProcess) => {
    if (p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((resolve) => p.once('exit', resolve));
    p.kill('SIGTERM');
    const timer = setTimeout(() => p.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await scale(stack, run, processes, stopProcess);
  } finally {
    await Promise.all(processes.map(stopProcess));
    await stack.stop();
    progress(`done in ${Math.round((Date.now() - startedAt) / 1000)} s; the private stack is stopped and wiped`);
  }
}

async function scale(
  stack: PrivateStack,
  run: string,
  processes: ChildProcess[],
  stopProcess: (p: ChildProcess) => Promise<void>,
): Promise<void> {
  // Every child process inherits the private stack's addresses and the run's own topic names.
  Object.assign(process.env, stack.env, { SENDLINE_TOPIC_PREFIX: `bench-${run}` });
  const addresses = serviceAddresses();
  const redis = createRedis(addresses.redisUrl);
  const accounts = new AccountsView(redis);
  const store = new EventStore({
    brokers: addresses.kafkaBrokers,
    registryUrl: addresses.schemaRegistryUrl,
    clientId: 'bench-scale',
    topics: addresses.topics,
  });
  try {
    await store.ensureTopics(topicConfigs(addresses.topics));
    // Asked again while a broker has not heard of the new topic yet ("does not host this topic-partition").
    const partitions = await withAdmin(store.kafka, async (admin) => {
      for (let attempt = 1; ; attempt++) {
        try {
          const { topics } = await admin.fetchTopicMetadata({ topics: [store.topics.messages] });
          return topics[0]!.partitions.map((p) => ({ leader: p.leader, replicas: p.replicas.length }));
        } catch (error) {
          if (attempt >= 50) throw error;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    });
    progress(
      `brokers: ${addresses.kafkaBrokers.join(', ')}; ${store.topics.messages}: ${partitions.length} partitions, ` +
        `leaders on brokers ${[...new Set(partitions.map((p) => p.leader))].sort().join(', ')}, ` +
        `${partitions[0]?.replicas} replicas each`,
    );
    const org = await createTestOrganization({ store, accounts });
    const domainState = (await accounts.domain(org.organizationId, org.domain))!;
    const dkimRecords = {
      [`${domainState.dkimSelector}._domainkey.${org.domain}`]: dkimRecordValue(domainState.dkimPublicKey),
    };

    const sink = child('bench/scale.ts', { BENCH_DKIM_RECORDS: JSON.stringify(dkimRecords) }, true);
    processes.push(sink);
    const counts: SinkCounts = { received: 0, unique: 0, twice: 0, withoutId: 0, lastAt: 0 };
    const sinkPort = await new Promise<number>((resolve) => {
      sink.on('message', (m: { ready?: boolean; port?: number } & Partial<SinkCounts>) => {
        if (m.ready) resolve(m.port!);
        else Object.assign(counts, m);
      });
    });
    const api = child('apps/api/src/main.ts', { SENDLINE_API_PORT: String(API_PORT), LOG_LEVEL: 'warn' });
    processes.push(api);
    await waitForHttp(`http://127.0.0.1:${API_PORT}/healthz`, 60_000);
    progress(`API on :${API_PORT}, sink on :${sinkPort}, organization ${org.organizationId}`);

    // ── Load: batches of 50 through the API ──────────────────────────────────────────────────────────────
    const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS * 2 });
    let counter = 0;
    /** Batches not wholly accepted, by HTTP status (or error code), e.g. "503: 2". */
    const httpErrors = new Map<string, number>();
    const failed = (kind: string) => httpErrors.set(kind, (httpErrors.get(kind) ?? 0) + 1);
    const errorsSince = (before: Map<string, number>) =>
      [...httpErrors]
        .map(([kind, n]) => [kind, n - (before.get(kind) ?? 0)] as const)
        .filter(([, n]) => n > 0)
        .map(([kind, n]) => `${kind}: ${n}`)
        .join(', ') || '0';
    const body = (i: number) => ({
      From: `Bench <bench@${org.domain}>`,
      To: `r${i}@bench.example.net`,
      Subject: `Receipt ${i}`,
      TextBody: 'Thank you for your order. '.repeat(8),
      Tag: 'bench',
    });
    /** Posts one batch; resolves with the messages accepted. */
    const sendBatch = (size: number) =>
      new Promise<number>((resolve) => {
        const text = JSON.stringify(Array.from({ length: size }, () => body(counter++)));
        const req = request(
          {
            host: '127.0.0.1',
            port: API_PORT,
            path: '/v1/email/batch',
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
              let accepted = 0;
              try {
                const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
                if (Array.isArray(answer))
                  accepted = answer.filter((item: { ErrorCode?: number }) => item.ErrorCode === 0).length;
              } catch {
                // counted below
              }
              if (res.statusCode !== 200) failed(String(res.statusCode));
              else if (accepted < size) failed('200 with item errors');
              resolve(accepted);
            });
          },
        );
        req.on('error', (error: NodeJS.ErrnoException) => {
          failed(error.code ?? error.message);
          resolve(0);
        });
        req.end(text);
      });
    /** `rate` messages a second for `seconds`, in batches of 10 leaving on schedule; resolves with the accepted. */
    const openLoop = async (rate: number, seconds: number) => {
      const start = Date.now();
      const inFlight: Promise<number>[] = [];
      let sent = 0;
      while (Date.now() - start < seconds * 1000) {
        const due = Math.floor(((Date.now() - start) / 1000) * rate);
        for (; sent + 10 <= due; sent += 10) inFlight.push(sendBatch(10));
        await new Promise((r) => setTimeout(r, 20));
      }
      return (await Promise.all(inFlight)).reduce((a, b) => a + b, 0);
    };
    /** `total` messages as fast as the API accepts them: batches of 50 on 4 connections. */
    const flatOut = async (total: number) => {
      let left = Math.ceil(total / BATCH);
      let accepted = 0;
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (left-- > 0) {
            const taken = await sendBatch(BATCH);
            accepted += taken;
          }
        }),
      );
      return accepted;
    };
    /** Waits until the sink has `target` distinct messages, or `seconds` passed; true when it has. */
    const waitForSink = async (target: number, seconds: number) => {
      const deadline = Date.now() + seconds * 1000;
      let lastPrinted = Date.now();
      while (counts.unique < target && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        if (Date.now() - lastPrinted > 5000) {
          lastPrinted = Date.now();
          progress(`  … ${counts.unique - (target - pending)} of ${pending} received at the sink`);
        }
      }
      return counts.unique >= target;
    };
    let pending = 0;

    // ── Sender copies ────────────────────────────────────────────────────────────────────────────────────
    const stoppedStats = new Map<ChildProcess, SenderStats>();
    const startCopies = async (copies: number, group: string): Promise<ChildProcess[]> => {
      const config: SenderConfig = {
        ...senderConfigFromEnv({}),
        groupId: group,
        retryGroupId: `${group}-retries`,
        startNewGroupsAt: 'latest',
        relay: { host: '127.0.0.1', port: sinkPort },
        heloName: 'bench.sendline.test',
        sessionTimeoutMs: 30_000,
        poolSize: 24,
      };
      // One after the other, as copies are added to a running deployment: the first places the fresh group at the
      // topics' ends, the second joins it (two at once race to place it, and the second fails: the group is busy).
      const started: ChildProcess[] = [];
      for (let i = 0; i < copies; i++) {
        const sender = child('test/sender/fixtures/senderProcess.ts', {
          SENDER_FIXTURE: JSON.stringify({ config, organizations: [org.organizationId] }),
        });
        processes.push(sender);
        started.push(sender);
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('a sender copy did not start')), 90_000);
          sender.once('exit', (code) => reject(new Error(`a sender copy exited (${code}) before it was ready`)));
          createInterface({ input: sender.stdout! }).on('line', (line) => {
            if (line.startsWith('stopped ')) stoppedStats.set(sender, JSON.parse(line.slice('stopped '.length)));
            if (line === 'ready') {
              clearTimeout(timer);
              resolve();
            }
          });
        });
      }
      return started;
    };
    /** The partitions of email.messages each member of `group` holds, e.g. ["0,1,2", "3,4,5"]. */
    const assignment = async (group: string): Promise<string[]> =>
      withAdmin(store.kafka, async (admin) => {
        const { groups } = await admin.describeGroups([group]);
        return (groups[0]?.members ?? [])
          .map((member) => AssignerProtocol.MemberAssignment.decode(member.memberAssignment))
          .map((decoded) => (decoded?.assignment[store.topics.messages] ?? []).sort((a, b) => a - b).join(','))
          .sort();
      });

    /** Redis's used_memory (the private Redis holds this run's state only). */
    const redisUsedBytes = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? NaN);
    /** Bytes in the three brokers' data directories (every replica; the log segments are preallocated sparsely). */
    const kafkaDiskBytes = () => {
      const bytesUnder = (dir: string): number =>
        readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => {
          const path = join(dir, entry.name);
          try {
            return sum + (entry.isDirectory() ? bytesUnder(path) : statSync(path).blocks * 512);
          } catch {
            return sum; // a segment or index rolled away meanwhile
          }
        }, 0);
      return [1, 2, 3].reduce((sum, n) => sum + bytesUnder(join(stack.dir, `kafka-${n}`, 'data')), 0);
    };
    const cpuOf = (pids: (number | undefined)[]) => pids.reduce<number>((ms, pid) => ms + cpuMs({ pid }), 0);
    const brokers: PrivateProcess[] = ['kafka-1', 'kafka-2', 'kafka-3'];

    /** A measured phase: `drive` sends (resolving with the messages accepted), then the sink gets them all. */
    const measure = async (phase: string, senders: ChildProcess[], drive: () => Promise<number>) => {
      const procs = {
        api: () => cpuMs(api),
        senders: () => cpuOf(senders.map((s) => s.pid)),
        sink: () => cpuMs(sink),
        kafka: () => cpuOf(brokers.map((b) => stack.pid(b))),
        redis: () => cpuOf([stack.pid('redis')]),
        registry: () => cpuOf([stack.pid('registry')]),
        load: ownCpuMs,
      };
      const cpuNow = () => Object.fromEntries(Object.entries(procs).map(([k, f]) => [k, f()]));
      const uniqueBefore = counts.unique;
      const twiceBefore = counts.twice;
      const errorsBefore = new Map(httpErrors);
      const cpuBefore = cpuNow();
      const redisBefore = await redisUsedBytes();
      const diskBefore = kafkaDiskBytes();
      const machineBefore = machineCpuMs();
      const start = Date.now();
      progress(`  ${phase}: sending`);
      const accepted = await drive();
      const acceptedIn = (Date.now() - start) / 1000;
      progress(
        `  ${phase}: accepted ${accepted} in ${acceptedIn.toFixed(1)} s (batches not wholly accepted: ` +
          `${errorsSince(errorsBefore)}); waiting for the sink`,
      );
      pending = accepted;
      const all = await waitForSink(uniqueBefore + accepted, DRAIN_S);
      const cpu = cpuNow();
      const machine = machineCpuMs();
      const redisGrew = (await redisUsedBytes()) - redisBefore;
      const diskGrew = kafkaDiskBytes() - diskBefore;
      const delivered = counts.unique - uniqueBefore;
      const span = ((all ? counts.lastAt : Date.now()) - start) / 1000;
      const used = Object.fromEntries(Object.keys(procs).map((k) => [k, cpu[k]! - cpuBefore[k]!]));
      const ours = Object.values(used).reduce((a, b) => a + b, 0);
      const busy = machine.busy - machineBefore.busy;
      const perMessage = (ms: number) => (delivered > 0 ? (ms / delivered).toFixed(2) : '-');
      progress(`  ${phase}: ${delivered} of ${accepted} received in ${span.toFixed(1)} s`);
      return {
        phase,
        copies: senders.length,
        delivered: `${delivered}/${accepted}`,
        'delivered/s': Math.round(delivered / span),
        'received twice': counts.twice - twiceBefore,
        'http errors': errorsSince(errorsBefore),
        'CPU ms/msg senders': perMessage(used.senders!),
        api: perMessage(used.api!),
        sink: perMessage(used.sink!),
        'kafka (3)': perMessage(used.kafka!),
        redis: perMessage(used.redis!),
        registry: perMessage(used.registry!),
        load: perMessage(used.load!),
        'all of this run': perMessage(ours),
        'sender cores': (used.senders! / 1000 / span).toFixed(2),
        // The rate follows from these two: delivered/s ≈ this run's cores ÷ its CPU ms a message × 1000.
        'run cores': (ours / 1000 / span).toFixed(2),
        'machine busy': `${Math.round((busy / (span * 1000 * machine.cores)) * 100)}%`,
        'others (cores)': (Math.max(0, busy - ours) / 1000 / span).toFixed(2),
        'redis KB/1k msgs': Math.round(redisGrew / 1024 / (delivered / 1000)),
        'kafka disk KB/1k msgs': Math.round(diskGrew / 1024 / (delivered / 1000)),
      };
    };
    type Row = Awaited<ReturnType<typeof measure>>;

    /** `copies` sender copies in a fresh group: warmed, then each measured phase; one row per phase. */
    const configuration = async (name: string, copies: number, warmUp: () => Promise<number>, measured: boolean) => {
      const group = `bench-scale-${run}-${name}`;
      progress(`${name}: starting ${copies} sender cop${copies === 1 ? 'y' : 'ies'} in group ${group}`);
      const senders = await startCopies(copies, group);
      const beforeWarmUp = counts.unique;
      const warmed = await warmUp();
      pending = warmed;
      if (!(await waitForSink(beforeWarmUp + warmed, DRAIN_S)))
        progress(`  warm-up not all delivered within ${DRAIN_S} s`);
      const assigned = await assignment(group);
      progress(`  warmed (${warmed} messages); partitions of email.messages by copy: ${assigned.join(' | ')}`);
      const rows: Row[] = [];
      if (measured) {
        // Named with the configuration's number when BENCH_COPIES repeats one ("3: 1× backlog").
        const label = (phase: string) => `${COPIES.length > 2 ? `${name.split('-')[0]}: ` : ''}${copies}× ${phase}`;
        if (RATE > 0) rows.push(await measure(label(`at ${RATE}/s`), senders, () => openLoop(RATE, RATE_S)));
        if (MESSAGES > 0) rows.push(await measure(label('backlog'), senders, () => flatOut(MESSAGES)));
      }
      const rss = senders.map((s) => peakRssMb(s.pid));
      await Promise.all(senders.map(stopProcess));
      await new Promise((resolve) => setImmediate(resolve));
      const stats = senders.map((s) => stoppedStats.get(s));
      const copiesRow = {
        configuration: name,
        'partitions by copy': assigned.join(' | '),
        // Over each copy's life, its warm-up included.
        'msgs by copy': stats.map((s) => s?.messages ?? '?').join(' / '),
        'msgs/run by copy': stats.map((s) => (s && s.runs > 0 ? (s.messages / s.runs).toFixed(0) : '?')).join(' / '),
        'skipped copies': stats.reduce((n, s) => n + (s?.duplicates ?? 0), 0),
        'peak RSS MB by copy': rss.join(' / '),
      };
      return { rows, copiesRow };
    };

    // The path's warm-up (fresh brokers' JIT, the API's), with a sender of its own: not reported.
    if (WARM_UP_S > 0) await configuration('warm-up', 1, () => openLoop(200, WARM_UP_S), false);
    const results: Row[] = [];
    const copiesRows: Record<string, unknown>[] = [];
    for (const [i, copies] of COPIES.entries()) {
      const { rows, copiesRow } = await configuration(
        `${i + 1}-${copies}-cop${copies === 1 ? 'y' : 'ies'}`,
        copies,
        () => (SENDER_WARM_UP_S > 0 ? openLoop(100, SENDER_WARM_UP_S) : Promise.resolve(0)),
        true,
      );
      results.push(...rows);
      copiesRows.push(copiesRow);
    }
    const apiRss = peakRssMb(api.pid);
    const sinkRss = peakRssMb(sink.pid);

    const cores = machineCpuMs().cores;
    console.log(
      `\nbench:scale — API → Kafka (3 brokers, ${partitions.length} partitions) → sender copies in one group → SMTP sink ` +
        `(STARTTLS; DKIM-signed, every 10th verified), loopback; per configuration ${RATE} msg/s for ${RATE_S} s ` +
        `(batches of 10), then a backlog of ${MESSAGES} sent as fast as accepted (batches of ${BATCH}); ` +
        `${cores} cores; ${new Date().toISOString()}`,
    );
    console.table(
      results.map((r) => ({
        phase: r.phase,
        delivered: r.delivered,
        'delivered/s': r['delivered/s'],
        'received twice': r['received twice'],
        'CPU ms/msg senders': r['CPU ms/msg senders'],
        'sender cores': r['sender cores'],
        'all of this run': r['all of this run'],
        'run cores': r['run cores'],
        'machine busy': r['machine busy'],
        'others (cores)': r['others (cores)'],
      })),
    );
    console.table(
      results.map((r) => ({
        phase: r.phase,
        'CPU ms/msg api': r.api,
        sink: r.sink,
        'kafka (3)': r['kafka (3)'],
        redis: r.redis,
        registry: r.registry,
        load: r.load,
        'http errors': r['http errors'],
        'redis KB/1k msgs': r['redis KB/1k msgs'],
        'kafka disk KB/1k msgs': r['kafka disk KB/1k msgs'],
      })),
    );
    console.table(copiesRows);
    console.log(
      `sink: ${counts.received} messages received over the run, ${counts.twice} of them a Message-ID received before, ` +
        `${counts.withoutId} without a Message-ID; peak RSS: API ${apiRss} MB (its primary and workers), sink ${sinkRss} MB`,
    );
    for (const kind of [`at ${RATE}/s`, 'backlog']) {
      const one = results.find((r) => r.copies === 1 && r.phase.endsWith(kind));
      const two = results.find((r) => r.copies === 2 && r.phase.endsWith(kind));
      if (one && two)
        console.log(
          `${kind}, two copies against one: ${(two['delivered/s'] / one['delivered/s']).toFixed(2)}× the messages a ` +
            `second, the senders' CPU ms a message ${one['CPU ms/msg senders']} → ${two['CPU ms/msg senders']}, ` +
            `received twice ${one['received twice']} → ${two['received twice']}`,
        );
    }
    agent.destroy();
  } finally {
    await store.disconnect();
    redis.disconnect();
  }
}
