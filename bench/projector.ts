/**
 * npm run bench:projector — how fast the projector writes views, on this machine:
 * message events projected into ClickHouse (the activity store) and suppression
 * events into Redis by the live consumer groups, catching up on a backlog; then a
 * replay of the 1,000,000 message events into a fresh database (target: under
 * 60 s) and of the suppressions into a fresh namespace, each compared with the
 * live view and swapped in.
 *
 * Everything runs on fresh topics, a fresh database and a fresh Redis namespace,
 * removed at the end. Bounded: fixed event counts, and a watchdog that cleans up
 * and exits if the run takes over 20 minutes. BENCH_MESSAGES sets the number of
 * messages (4 events each; default 250,000 → 1,000,000 events).
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { MessageEvent, SuppressionEvent } from '@sendline/domain';
import {
  createClickHouse,
  createRedis,
  deadLetterTopicOf,
  EventStore,
  loadLocalServicesEnv,
  migrate,
  serviceAddresses,
  topicConfigs,
  type StoredEvent,
  deleteKeys,
  type ProjectionName,
} from '@sendline/infra';
import { replayView } from '@sendline/application';
import { startProjector, type RunningProjector } from '@sendline/projector';
import { benchTopics, cpuMs } from './support';

loadLocalServicesEnv();
const addresses = serviceAddresses();
const run = randomUUID().slice(0, 8);
const topics = benchTopics(run);
const database = `bench_projector_${run}`;
const namespace = `bench-${run}`;
const groupPrefix = `bench-${run}-projector`;
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 250_000);
const SUPPRESSIONS = Number(process.env.BENCH_SUPPRESSIONS ?? 200_000);
const ORGANIZATIONS = 100;

const store = new EventStore({
  brokers: addresses.kafkaBrokers,
  registryUrl: addresses.schemaRegistryUrl,
  clientId: 'bench-projector',
  topics,
});
const clickhouse = createClickHouse(addresses.clickhouseUrl);
const redis = createRedis(addresses.redisUrl);
const organizations = Array.from({ length: ORGANIZATIONS }, () => randomUUID());
const projectors: RunningProjector[] = [];

async function cleanUp() {
  for (const projector of projectors.splice(0)) await projector.stop().catch(() => undefined);
  const admin = store.kafka.admin();
  await admin.connect();
  const all = Object.values(topics);
  const existing = new Set(await admin.listTopics());
  await admin
    .deleteTopics({ topics: [...all, ...all.map(deadLetterTopicOf)].filter((t) => existing.has(t)) })
    .catch(() => undefined);
  const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith(`bench-${run}`));
  if (groups.length > 0) await admin.deleteGroups(groups).catch(() => undefined);
  await admin.disconnect();
  const dbs = (
    await (await clickhouse.query({ query: 'SHOW DATABASES', format: 'JSONEachRow' })).json<{ name: string }>()
  )
    .map((d) => d.name)
    .filter((name) => name.startsWith(database));
  for (const db of dbs) await clickhouse.command({ query: `DROP DATABASE IF EXISTS ${db}` });
  await deleteKeys(redis, `${namespace}*`);
  await store.disconnect();
  await clickhouse.close();
  redis.disconnect();
}

const watchdog = setTimeout(() => {
  console.error('bench:projector took over 20 minutes; cleaning up and stopping');
  void cleanUp().finally(() => process.exit(1));
}, 20 * 60_000);

const meta = (organizationId: string, occurredAt: number) => ({
  eventId: randomUUID(),
  organizationId,
  occurredAt,
  schemaVersion: 1,
});

/** One message's four events: accepted, sent, deferred once, then an outcome (70% delivered). */
function messageEvents(n: number, at: number): MessageEvent[][] {
  const organizationId = organizations[n % ORGANIZATIONS]!;
  const messageId = randomUUID();
  const recipient = `r${n}@example.net`;
  const accepted: MessageEvent = {
    type: 'MessageAccepted',
    data: {
      messageId,
      from: { email: 'bench@example.test', name: 'Bench' },
      to: [{ email: recipient }],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: `Your receipt #${n}`,
      tag: `tag${n % 5}`,
      textBody: 'Thank you for your order. '.repeat(8),
      headers: [],
      metadata: { order: String(n) },
      attachments: [],
      trackOpens: false,
      trackLinks: 'None',
      messageStream: 'outbound',
      sizeBytes: 220,
      activeRecipients: [recipient],
      suppressedRecipients: [],
      submittedAt: at,
    },
    metadata: meta(organizationId, at),
  };
  const sent: MessageEvent = { type: 'MessageSent', data: { messageId }, metadata: meta(organizationId, at + 50) };
  const deferred: MessageEvent = {
    type: 'MessageDeferred',
    data: {
      messageId,
      recipient,
      reason: 'response',
      smtpResponse: '451 4.2.0 Try later',
      summary: 'Mailbox temporarily unavailable',
      attempt: 1,
      nextAttemptAt: at + 60_000,
    },
    metadata: meta(organizationId, at + 500),
  };
  const at2 = at + 60_500;
  const kind = n % 10;
  const outcome: MessageEvent =
    kind < 7
      ? {
          type: 'MessageDelivered',
          data: { messageId, recipient, smtpResponse: '250 2.0.0 OK', destinationServer: 'mx.example.net' },
          metadata: meta(organizationId, at2),
        }
      : kind === 7
        ? {
            type: 'MessageHardBounced',
            data: {
              messageId,
              recipient,
              smtpResponse: '550 5.1.1 unknown',
              statusCode: 550,
              enhancedStatus: '5.1.1',
              summary: 'Bad destination mailbox address',
            },
            metadata: meta(organizationId, at2),
          }
        : kind === 8
          ? {
              type: 'MessageSoftBounced',
              data: {
                messageId,
                recipient,
                reason: 'PermanentFailure',
                smtpResponse: '552 5.2.2 full',
                summary: 'Mailbox full',
                attempts: 2,
              },
              metadata: meta(organizationId, at2),
            }
          : {
              type: 'MessagePolicyRejected',
              data: {
                messageId,
                recipient,
                smtpResponse: '550 5.7.1 spam',
                statusCode: 550,
                enhancedStatus: '5.7.1',
                summary: 'Rejected by policy',
              },
              metadata: meta(organizationId, at2),
            };
  return [[accepted], [sent], [deferred], [outcome]];
}

async function appendAll(waves: () => Generator<StoredEvent[]>): Promise<{ events: number; seconds: number }> {
  const started = performance.now();
  let events = 0;
  let inFlight: Promise<void>[] = [];
  for (const wave of waves()) {
    for (let i = 0; i < wave.length; i += 2000) {
      const chunk = wave.slice(i, i + 2000);
      events += chunk.length;
      inFlight.push(store.append(chunk));
      if (inFlight.length >= 4) {
        await Promise.all(inFlight);
        inFlight = [];
      }
    }
  }
  await Promise.all(inFlight);
  return { events, seconds: (performance.now() - started) / 1000 };
}

/** Starts a projection on the backlog and waits until its lag is 0; events/s over that time. */
async function project(projection: ProjectionName, events: number): Promise<{ seconds: number; perSecond: number }> {
  const started = performance.now();
  const projector = await startProjector({
    store,
    redis,
    clickhouse,
    database,
    namespace,
    groupPrefix,
    projections: [projection],
    retention: false,
    lagIntervalMs: 60_000,
  });
  projectors.push(projector);
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    const lags = await projector.refreshLag();
    if (lags.length > 0 && lags.every((lag) => lag.lag === 0)) break;
    if (Date.now() > deadline) throw new Error(`${projection} did not catch up within 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const seconds = (performance.now() - started) / 1000;
  return { seconds, perSecond: Math.round(events / seconds) };
}

/**
 * CPU ms per 1,000 events of this process (the projector or the replay; the appends are done before) and of the local
 * services (infra/local's pid files; '-' when they run elsewhere), while `work` runs.
 */
const servicePids = (() => {
  const runDir = `${process.env.SENDLINE_LOCAL_DIR ?? '.local'}/run`;
  try {
    return readdirSync(runDir)
      .filter((file) => /^(kafka(-\d+)?|clickhouse|redis)\.pid$/.test(file))
      .map((file) => ({ name: file.replace(/\.pid$/, ''), pid: Number(readFileSync(`${runDir}/${file}`, 'utf8')) }));
  } catch {
    return [];
  }
})();
function cpuNow(): Record<string, number> {
  const { user, system } = process.cpuUsage();
  const services: Record<string, number> = { kafka: 0, clickhouse: 0, redis: 0 };
  for (const { name, pid } of servicePids) services[name.replace(/-\d+$/, '')]! += cpuMs({ pid });
  return { 'this process': (user + system) / 1000, ...services };
}
function cpuPerThousand(before: Record<string, number>, events: number): Record<string, string> {
  const after = cpuNow();
  return Object.fromEntries(
    Object.keys(after).map((name) => [
      `CPU ms/1k events: ${name}`,
      servicePids.length === 0 && name !== 'this process'
        ? '-'
        : ((after[name]! - before[name]!) / (events / 1000)).toFixed(0),
    ]),
  );
}

const rows: Record<string, string | number>[] = [];
try {
  await store.ensureTopics(topicConfigs(topics, 6));
  await migrate(clickhouse, database);

  // Message events, in waves of 5,000 messages: accepted, then sent, deferred, outcomes (as a live stream interleaves them).
  const now = Date.now() - 2 * 24 * 3600_000;
  const appendedMessages = await appendAll(function* () {
    for (let first = 0; first < MESSAGES; first += 5000) {
      const wave = Array.from({ length: Math.min(5000, MESSAGES - first) }, (_, i) =>
        messageEvents(first + i, now + first + i),
      );
      for (let step = 0; step < 4; step++) yield wave.flatMap((m) => m[step]!) as StoredEvent[];
    }
  });
  console.error(`appended ${appendedMessages.events} message events in ${appendedMessages.seconds.toFixed(1)} s`);
  const beforeActivity = cpuNow();
  const activity = await project('activity', appendedMessages.events);
  rows.push({
    case: `live projector → ClickHouse (${appendedMessages.events.toLocaleString('en')} message events, backlog)`,
    seconds: activity.seconds.toFixed(1),
    'events/s': activity.perSecond,
    ...cpuPerThousand(beforeActivity, appendedMessages.events),
  });

  // What the activity store holds per message on disk (compressed), once the live projection caught up.
  const disk = await (
    await clickhouse.query({
      // The database's name is the run's own (`bench_projector_<hex>`): this ClickHouse takes no query parameters.
      query: `SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts
              WHERE active AND database = '${database}' GROUP BY table ORDER BY bytes DESC`,
      format: 'JSONEachRow',
    })
  ).json<{ table: string; rows: string; bytes: string }>();
  const onDisk = disk
    .filter((t) => Number(t.bytes) > 0)
    .map((t) => `${t.table} ${Math.round(Number(t.bytes) / MESSAGES)} B/message (${t.rows} rows)`);
  console.error(`ClickHouse on disk after the live projection: ${onDisk.join(', ')}`);

  const appendedSuppressions = await appendAll(function* () {
    for (let first = 0; first < SUPPRESSIONS; first += 10_000) {
      const at = Date.now();
      yield Array.from({ length: Math.min(10_000, SUPPRESSIONS - first) }, (_, i): SuppressionEvent => {
        const n = first + i;
        return {
          type: 'SuppressionAdded',
          data: { emailAddress: `s${n}@example.net`, reason: 'ManualSuppression', origin: 'Customer', createdAt: at },
          metadata: meta(organizations[n % ORGANIZATIONS]!, at),
        };
      }) as StoredEvent[];
    }
  });
  console.error(
    `appended ${appendedSuppressions.events} suppression events in ${appendedSuppressions.seconds.toFixed(1)} s`,
  );
  const beforeSuppressions = cpuNow();
  const suppressions = await project('suppressions', appendedSuppressions.events);
  rows.push({
    case: `live projector → Redis (${appendedSuppressions.events.toLocaleString('en')} suppression events, backlog)`,
    seconds: suppressions.seconds.toFixed(1),
    'events/s': suppressions.perSecond,
    ...cpuPerThousand(beforeSuppressions, appendedSuppressions.events),
  });

  const beforeReplay = cpuNow();
  const replayed = await replayView('activity', {
    store,
    clickhouse,
    database,
    liveGroupId: `${groupPrefix}-activity`,
    settleMs: 500,
  });
  rows.push({
    case: `replay activity: rebuild ${replayed.events.toLocaleString('en')} events into a fresh database`,
    seconds: (replayed.buildMs / 1000).toFixed(1),
    'events/s': replayed.eventsPerSecond,
  });
  rows.push({
    case: `replay activity: whole run (rebuild, compare ${replayed.organizations.rebuilt} organizations, swap): ${replayed.swapped ? 'swapped' : 'NOT swapped'}`,
    seconds: (replayed.durationMs / 1000).toFixed(1),
    'events/s': Math.round((replayed.events / replayed.durationMs) * 1000),
    ...cpuPerThousand(beforeReplay, replayed.events),
  });
  const replayedSuppressions = await replayView('suppressions', {
    store,
    redis,
    namespace,
    liveGroupId: `${groupPrefix}-suppressions`,
    settleMs: 500,
  });
  rows.push({
    case: `replay suppressions: rebuild ${replayedSuppressions.events.toLocaleString('en')} events, compare, swap: ${replayedSuppressions.swapped ? 'swapped' : 'NOT swapped'}`,
    seconds: (replayedSuppressions.durationMs / 1000).toFixed(1),
    'events/s': replayedSuppressions.eventsPerSecond,
  });

  console.log(`\nbench:projector — ${new Date().toISOString()}, 6 partitions, loopback services`);
  console.table(rows);
  const target = replayed.buildMs < 60_000 ? 'met' : 'MISSED';
  console.log(
    `replay of ${replayed.events.toLocaleString('en')} message events: ${(replayed.buildMs / 1000).toFixed(1)} s (target < 60 s: ${target})`,
  );
  if (!replayed.equal || !replayedSuppressions.equal) {
    console.log(
      'differences:',
      JSON.stringify([replayed.differences, replayedSuppressions.differences]).slice(0, 2000),
    );
  }
} finally {
  clearTimeout(watchdog);
  await cleanUp();
}
