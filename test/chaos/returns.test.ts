import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import { NO_ORGANIZATION } from '@sendline/domain';
import {
  createRedis,
  deadLetterTopicOf,
  EventStore,
  positionsKeyOf,
  prefixedTopicNames,
  returnPathKey,
  secretKeyFromEnv,
  SuppressionView,
  topicConfigs,
  withAdmin,
  type Redis,
} from '@sendline/infra';
import { startProjector, type RunningProjector } from '@sendline/projector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshActivityDatabase } from '../projector/support';
import { dataOf, EventTap } from '../sender/support';
import { addresses, deleteTopicsAndDisconnect, uniqueName } from '../support/services';
import { AppProcess, appEnvironment, sleep, waitUntil } from './harness';
import { deliveredAnHourAgo } from './receiving';

/**
 * Issue 33's kill test: the MX (apps/mx) and the returns reader (apps/returns), each its own process started from the
 * entry point `npm start` runs (main.ts, under tsx), are killed with SIGKILL while DSNs come in, and started again. A remote server hands a
 * bounce over only with our 250 (it keeps the DSN and tries again after a refused connection, a dropped one or a
 * 4xx), so the claim is about exactly those: every DSN our MX answered 250 ends as its recipient's one
 * MessageHardBounced in the log and a suppression in the Redis view; none is lost, none is applied twice. The same
 * event appended again by a redelivery (the same derived id) is one event to every reader: it is counted apart.
 *
 * The messages are put in the activity store the cheap way (their Accepted, Sent and Delivered events appended on
 * this file's topics and projected by a projector in this process); the mail servers of the recipients are this
 * file's loader. Everything runs on the shared services, on topics, groups, a ClickHouse database and an
 * organization of its own.
 */

const COUNT = 300;
/** DSNs in flight at once: a handful of remote servers, each on a connection of its own. */
const CONCURRENCY = 8;
const prefix = uniqueName('test-chaos-returns');
const topics = prefixedTopicNames(prefix);
const returnsGroup = `${prefix}-returns-reader`;
const secretKey = secretKeyFromEnv();
const tokenKey = returnPathKey(secretKey);
const organizationId = `chaos-returns-${randomUUID()}`;

let store: EventStore;
let redis: Redis;
let activity: Awaited<ReturnType<typeof freshActivityDatabase>>;
let projector: RunningProjector;
let tap: EventTap;
const children: AppProcess[] = [];

/** One message the test bounces: its only recipient, the address its DSN goes to, the DSN. */
interface Bounce {
  messageId: string;
  recipient: string;
  to: string;
  raw: Buffer;
}
let bounces: Bounce[] = [];

/** The environment of this file's apps: its topics, its group, its activity database, the same secret key. */
const env = (extra: Record<string, string>) => () =>
  appEnvironment(addresses, {
    SENDLINE_TOPIC_PREFIX: prefix,
    SENDLINE_SECRET_KEY: process.env.SENDLINE_SECRET_KEY ?? '',
    CLICKHOUSE_DATABASE: activity.database,
    LOG_LEVEL: 'info',
    ...extra,
  });

/** A process's own log lines (pino's JSON). */
function logLines(app: AppProcess): Record<string, unknown>[] {
  return app.ownOutput.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/** How many of the app's log lines say `msg`, from now on (the count grows as they come). */
function linesSaying(app: AppProcess, msg: string): { count: number } {
  const counter = { count: 0 };
  app.onLine((line) => {
    if (line.includes(`"msg":"${msg}"`)) counter.count++;
  });
  return counter;
}

/**
 * The records of mail.received: on the topic, and those the returns group has committed past (each partition's end
 * and committed offset, summed).
 */
const receivedAndCommitted = () =>
  withAdmin(store.kafka, async (admin) => {
    const ends = await admin.fetchTopicOffsets(topics.received);
    const [offsets] = await admin.fetchOffsets({ groupId: returnsGroup, topics: [topics.received] });
    return {
      received: ends.reduce((n, p) => n + Number(p.high), 0),
      committed: (offsets?.partitions ?? []).reduce((n, p) => n + Math.max(0, Number(p.offset)), 0),
    };
  });

/** Starts the MX (port 0: a free one) and reads where it listens from its log line, as infra/local/bin/start does. */
async function startMx(): Promise<{ mx: AppProcess; address: string }> {
  const mx = new AppProcess('mx', 'apps/mx/src/main.ts', env({ SENDLINE_MX_PORT: '0' })).start();
  children.push(mx);
  let address: string | undefined;
  await waitUntil(
    () => {
      address = logLines(mx).find((line) => line.msg === 'mx listening')?.address as string | undefined;
      return address !== undefined;
    },
    90_000,
    () => `the MX to listen:\n${mx.output}`,
  );
  return { mx, address: address! };
}

async function startReturns(): Promise<AppProcess> {
  const reader = new AppProcess(
    'returns',
    'apps/returns/src/main.ts',
    env({ SENDLINE_RETURNS_GROUP: returnsGroup, SENDLINE_RETURNS_SESSION_TIMEOUT_MS: '6000' }),
  ).start();
  children.push(reader);
  await waitUntil(
    () => logLines(reader).some((line) => line.msg === 'returns reader started'),
    90_000,
    () => `the returns reader to start:\n${reader.output}`,
  );
  return reader;
}

/**
 * Arms a SIGKILL of `app` at its next log line saying `msg` (sent the moment this process reads the line: the app
 * is then busy with that very work, or just past it), and waits until it is gone; `snapshot` is taken at that moment.
 */
async function killAtNext<T>(app: AppProcess, msg: string, snapshot: () => T): Promise<T> {
  let taken: T | undefined;
  let gone = false;
  const stop = app.onLine((line) => {
    if (!line.includes(`"msg":"${msg}"`)) return;
    stop();
    taken = snapshot();
    void app.kill('SIGKILL').then(() => {
      gone = true;
    });
  });
  await waitUntil(
    () => gone,
    180_000,
    () => `the ${app.name} to log "${msg}" and be killed:\n${app.ownOutput.slice(-3000)}`,
  );
  return taken!;
}

/** What one attempt to hand a DSN over got: the reply's code, or 0 when no reply came (refused, dropped). */
interface Attempt {
  code: number;
  failure?: string;
}

/**
 * The remote servers: `CONCURRENCY` of them take the DSNs in turn, each on a connection of its own, to the MX's
 * current address. A DSN is handed over with a 250 only; after a connection that failed or a 4xx it is tried again
 * later (a 5xx would end it, as a real server gives up: none is expected). Bounded: a DSN is given up after
 * `giveUpAfterMs` of attempts.
 */
class Loader {
  target = '';
  answered = 0;
  inFlight = 0;
  readonly attempts = new Map<string, Attempt[]>();
  readonly handedOver = new Set<string>();

  constructor(
    private readonly dsns: readonly Bounce[],
    private readonly giveUpAfterMs = 180_000,
  ) {}

  async run(): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < this.dsns.length) {
        const dsn = this.dsns[next++]!;
        await this.handOver(dsn);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  }

  private async handOver(dsn: Bounce): Promise<void> {
    const attempts: Attempt[] = [];
    this.attempts.set(dsn.messageId, attempts);
    const giveUpAt = Date.now() + this.giveUpAfterMs;
    for (;;) {
      const attempt = await this.attempt(dsn);
      attempts.push(attempt);
      if (attempt.code === 250) {
        this.handedOver.add(dsn.messageId);
        this.answered++;
        return;
      }
      if (attempt.code >= 500 || Date.now() > giveUpAt) return;
      await sleep(200 + Math.random() * 300);
    }
  }

  private async attempt(dsn: Bounce): Promise<Attempt> {
    const [host, port] = this.target.split(':');
    const transport = nodemailer.createTransport({
      host,
      port: Number(port),
      secure: false,
      ignoreTLS: true,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 60_000,
    });
    this.inFlight++;
    try {
      const info = await transport.sendMail({ envelope: { from: '', to: [dsn.to] }, raw: dsn.raw });
      return { code: Number(String(info.response).slice(0, 3)) };
    } catch (error) {
      const { responseCode, code } = error as { responseCode?: number; code?: string };
      return { code: responseCode ?? 0, failure: code ?? String(error) };
    } finally {
      this.inFlight--;
      transport.close();
    }
  }
}

beforeAll(async () => {
  store = new EventStore({
    brokers: addresses.kafkaBrokers,
    registryUrl: addresses.schemaRegistryUrl,
    clientId: 'chaos-returns',
    topics,
  });
  await store.ensureTopics(topicConfigs(topics, 3));
  redis = createRedis(addresses.redisUrl);
  activity = await freshActivityDatabase('test_chaos_returns');
  tap = await EventTap.start(
    store,
    [topics.messages, topics.suppressions, topics.received],
    () => new Set([organizationId, NO_ORGANIZATION]),
  );
  projector = await startProjector({
    store,
    redis,
    clickhouse: activity.client,
    database: activity.database,
    groupPrefix: `${prefix}-projector`,
    projections: ['activity', 'suppressions'],
    retention: false,
    writer: { maxDelayMs: 100 },
  });

  // COUNT messages delivered an hour ago, one recipient each, in the activity store.
  bounces = await deliveredAnHourAgo(COUNT, { store, organizationId, tokenKey, activity });
}, 240_000);

afterAll(async () => {
  await Promise.all(children.map((child) => child.kill('SIGKILL')));
  await tap?.stop().catch(() => undefined);
  await projector?.stop().catch(() => undefined);
  if (store) {
    // The killed reader's group can be deleted once its last member's session (6 s) has run out.
    const groups = [returnsGroup, ...Object.values(projector?.groups ?? {})];
    const deleted = new Set<string>();
    await waitUntil(
      async () => {
        for (const group of groups.filter((name) => !deleted.has(name))) {
          await withAdmin(store.kafka, (admin) => admin.deleteGroups([group])).then(
            () => deleted.add(group),
            () => undefined,
          );
        }
        return deleted.size === groups.length;
      },
      30_000,
      'the consumer groups to be deleted',
    ).catch(() => undefined);
    await deleteTopicsAndDisconnect(store);
  }
  if (redis) {
    await redis.del(new SuppressionView(redis).keyOf(organizationId));
    const positions = positionsKeyOf('sl', 'suppressions');
    const fields = (await redis.hkeys(positions)).filter((field) => field.startsWith(`${topics.suppressions}:`));
    if (fields.length > 0) await redis.hdel(positions, ...fields);
    redis.disconnect();
  }
  await activity?.drop();
}, 120_000);

/** The messages' events on the log, per message (duplicates, the same event id read twice, included). */
const allOf = (type: string) => tap.allEvents((event) => event.type === type);

describe('the MX and the returns reader killed under a stream of DSNs', () => {
  it('records every bounce answered 250 once: lost 0, applied twice 0', async () => {
    const started = Date.now();
    let { mx, address } = await startMx();
    let reader = await startReturns();
    // What each first process says it did: the MX's appends Kafka acknowledged, the reader's recorded returns.
    const acknowledged = linesSaying(mx, 'mail received');
    const recorded = linesSaying(reader, 'return recorded');
    const loader = new Loader(bounces);
    loader.target = address;
    const loading = loader.run();

    // The MX killed once a third of the DSNs were answered 250, with others in flight; started again (a new port).
    await waitUntil(
      () => loader.answered >= COUNT / 3 && loader.inFlight > 0,
      180_000,
      () => `a third of the DSNs answered 250 (${loader.answered}):\n${mx.ownOutput.slice(-3000)}`,
    );
    // At the MX's next "mail received": it is answering a mail whose append Kafka just acknowledged, others under way.
    const mxKill = await killAtNext(mx, 'mail received', () => ({
      answered: loader.answered,
      inFlight: loader.inFlight,
      appendsAcknowledged: acknowledged.count,
    }));
    ({ mx, address } = await startMx());
    loader.target = address;

    // The reader killed once two thirds were answered and it has recorded some, with DSNs still in flight.
    await waitUntil(
      () =>
        loader.answered >= (2 * COUNT) / 3 && allOf('MessageHardBounced').length >= COUNT / 3 && loader.inFlight > 0,
      180_000,
      () =>
        `two thirds answered (${loader.answered}) and a third recorded (${allOf('MessageHardBounced').length}):\n` +
        reader.ownOutput.slice(-3000),
    );
    // At the reader's next "return recorded": it is at the end of a batch (events appended, suppressions applied), its
    // commit under way or done, with other partitions' batches in hand.
    const readerKill = await killAtNext(reader, 'return recorded', () => ({
      answered: loader.answered,
      inFlight: loader.inFlight,
      hardBouncedInLog: allOf('MessageHardBounced').length,
      returnsRecorded: recorded.count,
    }));
    // What the killed reader left to its successor, read right after the kill: mail on the topic it had not committed
    // (read or not yet), and how much of it the reader had recorded already.
    const atReaderKill = await receivedAndCommitted();
    const readerLeft = {
      uncommittedRightAfter: atReaderKill.received - atReaderKill.committed,
      recordedNotCommitted: Math.max(0, readerKill.returnsRecorded - atReaderKill.committed),
    };
    reader = await startReturns();
    await loading;

    // Every DSN answered 250 applied: its HardBounced in the log, its recipient suppressed in the Redis view.
    const handedOver = bounces.filter((bounce) => loader.handedOver.has(bounce.messageId));
    const suppressions = new SuppressionView(redis);
    const missing = async () => {
      const bounced = new Set(
        allOf('MessageHardBounced').map(
          (event) => `${dataOf(event).messageId as string} ${dataOf(event).recipient as string}`,
        ),
      );
      const suppressed = await suppressions.suppressedAmong(
        organizationId,
        handedOver.map((bounce) => bounce.recipient),
      );
      return handedOver.filter(
        (bounce) => !bounced.has(`${bounce.messageId} ${bounce.recipient}`) || !suppressed.has(bounce.recipient),
      );
    };
    const deadLetters = () =>
      withAdmin(store.kafka, async (admin) =>
        (await admin.fetchTopicOffsets(deadLetterTopicOf(topics.received))).reduce((n, p) => n + Number(p.high), 0),
      );
    await waitUntil(
      async () => (await missing()).length === 0,
      180_000,
      'every bounce answered 250 to be applied',
    ).catch(async (error: unknown) => {
      const left = await missing();
      throw new Error(
        `${String(error)}: ${left.length} missing (${left
          .slice(0, 5)
          .map((bounce) => bounce.messageId)
          .join(', ')}…), dead letters ${await deadLetters()}\nreader's log:\n${reader.ownOutput.slice(-4000)}`,
      );
    });

    // Count. Lost: answered 250, yet no HardBounced for its recipient or no suppression.
    const lost = (await missing()).length;
    // Applied twice: more than one distinct HardBounced event id for a message and recipient. The same id read again
    // (appended again by a redelivery) is one event to every reader, counted apart.
    const idsOf = new Map<string, Set<string>>();
    for (const event of allOf('MessageHardBounced')) {
      const key = `${dataOf(event).messageId as string} ${dataOf(event).recipient as string}`;
      idsOf.set(key, (idsOf.get(key) ?? new Set()).add(event.metadata.eventId));
    }
    const appliedTwice = [...idsOf].filter(([, ids]) => ids.size > 1);
    const suppressionIdsOf = new Map<string, Set<string>>();
    for (const event of allOf('SuppressionAdded')) {
      const address = dataOf(event).emailAddress as string;
      suppressionIdsOf.set(address, (suppressionIdsOf.get(address) ?? new Set()).add(event.metadata.eventId));
    }
    const attempts = [...loader.attempts.values()].flat();
    const summary = {
      dsns: COUNT,
      answered250: loader.handedOver.size,
      notHandedOver: COUNT - loader.handedOver.size,
      attempts: attempts.length,
      connectionFailures: attempts.filter((attempt) => attempt.code === 0).length,
      answered4xx: attempts.filter((attempt) => attempt.code >= 400 && attempt.code < 500).length,
      answered5xx: attempts.filter((attempt) => attempt.code >= 500).length,
      mailReceivedOnTopic: (await receivedAndCommitted()).received,
      mxKilledAt: mxKill,
      readerKilledAt: { ...readerKill, ...readerLeft },
      lost,
      appliedTwice: appliedTwice.length,
      hardBounced: idsOf.size,
      hardBouncedReappendedSameId:
        allOf('MessageHardBounced').length - tap.events((e) => e.type === 'MessageHardBounced').length,
      suppressionsAddedDistinct: suppressionIdsOf.size,
      suppressionsReappendedSameId:
        allOf('SuppressionAdded').length - tap.events((e) => e.type === 'SuppressionAdded').length,
      suppressionsWithTwoIds: [...suppressionIdsOf.values()].filter((ids) => ids.size > 1).length,
      deadLetters: await deadLetters(),
      seconds: Math.round((Date.now() - started) / 1000),
    };
    console.log('chaos returns:', JSON.stringify(summary));

    expect(summary.notHandedOver).toBe(0);
    expect(summary.answered5xx).toBe(0);
    expect(lost).toBe(0);
    expect(appliedTwice.map(([key, ids]) => `${key}: ${[...ids].join(', ')}`)).toEqual([]);
    expect(idsOf.size).toBe(COUNT);
    expect(summary.suppressionsWithTwoIds).toBe(0);
    expect(summary.mailReceivedOnTopic).toBeGreaterThanOrEqual(summary.answered250);
    expect(summary.deadLetters).toBe(0);
  });
});
