import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import { AssignerProtocol, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_ORGANIZATION } from '@sendline/domain';
import {
  AccountsView,
  createRedis,
  DEFAULT_INBOUND_DOMAIN,
  EventStore,
  inboundHashOf,
  MemoryZone,
  returnPathKey,
  secretKeyFromEnv,
  startDnsServer,
  SuppressionView,
  type Redis,
  type RunningDnsServer,
  type StoredEvent,
} from '@sendline/infra';
import { startProjector, type RunningProjector } from '@sendline/projector';
import { Webhooks, webhooksConfigFromEnv } from '@sendline/webhooks';
import { freshActivityDatabase } from '../projector/support';
import { dataOf, EventTap } from '../sender/support';
import { freePort } from '../support/ports';
import { startPrivateStack, type PrivateStack } from '../support/privateStack';
import { Receiver } from '../webhooks/support';
import { AppProcess, appEnvironment, sleep, waitUntil } from './harness';
import { inboundOrganization } from '../support/receiving';
import { deliveredAnHourAgo } from './receiving';

/**
 * Issue 38, part 1, the receiving side: two copies each of the MX (apps/mx), the returns reader (apps/returns) and the
 * inbound reader (apps/inbound) on the three-broker Kafka, each copy with its own instance id (SENDLINE_INSTANCE_ID:
 * its Kafka client id) and the MX copies with their own ports; the readers split mail.received's partitions through
 * their groups (docs/scaling.md). The webhooks process that posts the inbound hook's calls runs in this process (one
 * copy, never killed: its own copies are twoCopies.test.ts's), and so does a projector of the activity store (the
 * returns reader matches a DSN to its message there) and of the suppression view (a reader killed between appending
 * a bounce and applying its suppression to the view leaves the suppression to the projector, as in production: read
 * again, the bounce is already in the activity store and decides nothing new).
 *
 * The remote servers are this file's loader: DSNs about messages we delivered (each recipient unknown: a hard bounce,
 * a suppression) and inbound mail to an organization's inbound address, half to each MX copy, a message handed over
 * only with a 250 and tried again on the other MX after a connection that failed (a sender with two MX records).
 * Once both copies of every app have done work (each MX answered 250, each reader's group committed past mail on the
 * partitions that copy held), copy b of each app is SIGKILLed at once and started again; while it starts, the load
 * goes on through MX copy a, and b's partitions wait for b's session to run out (6 s), then go to copy a or to the new b. Counted: every DSN answered 250 is one MessageHardBounced and one
 * suppression (none lost, none applied twice: one event id each), every inbound mail answered 250 is posted to the
 * hook, one call (one Webhook-Id) per inbound message, each posted once.
 */

const DSNS = 120;
const INBOUND = 120;
/** Mails started per second (both kinds, both MX copies), at most CONCURRENCY in flight: the load lasts ~20 s. */
const RATE = 12;
const CONCURRENCY = 8;
const COPIES = ['a', 'b'] as const;
type Copy = (typeof COPIES)[number];
const GROUPS = ['returns-reader', 'inbound-reader'];

const secretKey = secretKeyFromEnv();
const tokenKey = returnPathKey(secretKey);
const organizationId = `chaos-copies-mail-${randomUUID()}`;
const inboundHash = inboundHashOf(organizationId, secretKey);
const inboundAddress = `${inboundHash}@${DEFAULT_INBOUND_DOMAIN}`;

let stack: PrivateStack;
let store: EventStore;
let redis: Redis;
let admin: Admin;
let activity: Awaited<ReturnType<typeof freshActivityDatabase>>;
let projector: RunningProjector;
let dns: RunningDnsServer;
let receiver: Receiver;
let webhooks: Webhooks;
let tap: EventTap;
const apps = new Map<string, AppProcess>();
/** Every process started, killed ones included (their logs explain a repeat). */
const everyApp: AppProcess[] = [];
const mxPorts = new Map<Copy, number>();

/** One mail of the load: a DSN about one of our messages, or an inbound mail (its subject names it). */
type Mail =
  | { kind: 'dsn'; id: string; messageId: string; recipient: string; to: string; raw: Buffer }
  | { kind: 'inbound'; id: string };

/**
 * The remote servers: mails started at RATE a second, at most CONCURRENCY at once, each on a connection of its own,
 * mail i first to MX copy a or b by its parity. A mail is handed over with a 250 only; after a connection that failed
 * (refused, dropped) it is tried on the other copy, after a 4xx on the same one, until it gets a 250.
 */
class Loader {
  readonly handedOver = new Set<string>();
  /** 250s per MX copy. */
  readonly answeredBy = new Map<Copy, number>(COPIES.map((copy) => [copy, 0]));
  /** Mails tried again after an attempt without an answer: the first may have been recorded without its 250. */
  readonly resent = new Set<string>();
  readonly attempts = { total: 0, noAnswer: 0, answered4xx: 0, answered5xx: 0 };

  constructor(private readonly mails: readonly Mail[]) {}

  async run(): Promise<void> {
    const started = Date.now();
    const inFlight = new Set<Promise<void>>();
    for (const [i, mail] of this.mails.entries()) {
      const due = started + (i * 1000) / RATE;
      if (due > Date.now()) await sleep(due - Date.now());
      while (inFlight.size >= CONCURRENCY) await Promise.race(inFlight);
      const handing = this.handOver(mail, COPIES[i % 2]!);
      inFlight.add(handing);
      void handing.finally(() => inFlight.delete(handing));
    }
    await Promise.all(inFlight);
  }

  private async handOver(mail: Mail, first: Copy): Promise<void> {
    let copy = first;
    const giveUpAt = Date.now() + 120_000;
    for (;;) {
      const code = await this.attempt(mail, copy);
      this.attempts.total++;
      if (code === 250) {
        this.handedOver.add(mail.id);
        this.answeredBy.set(copy, this.answeredBy.get(copy)! + 1);
        return;
      }
      if (code >= 500) this.attempts.answered5xx++;
      if (code >= 500 || Date.now() > giveUpAt) return;
      if (code === 0) {
        this.attempts.noAnswer++;
        this.resent.add(mail.id);
        copy = copy === 'a' ? 'b' : 'a';
      } else this.attempts.answered4xx++;
      await sleep(100 + Math.random() * 200);
    }
  }

  private async attempt(mail: Mail, copy: Copy): Promise<number> {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: mxPorts.get(copy)!,
      secure: false,
      ignoreTLS: true,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
    try {
      const info =
        mail.kind === 'dsn'
          ? await transport.sendMail({ envelope: { from: '', to: [mail.to] }, raw: mail.raw })
          : await transport.sendMail({
              envelope: { from: 'customer@sender.example', to: [inboundAddress] },
              from: 'customer@sender.example',
              to: inboundAddress,
              subject: mail.id,
              text: `Reply ${mail.id}`,
            });
      return Number(String(info.response).slice(0, 3));
    } catch (error) {
      return (error as { responseCode?: number }).responseCode ?? 0;
    } finally {
      transport.close();
    }
  }
}

function logLines(app: AppProcess): Record<string, unknown>[] {
  return app.ownOutput.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/** The app process of `kind` for `copy`, as `npm start` runs it, with its own instance id (and port, the MX). */
function appOf(kind: 'mx' | 'returns' | 'inbound', copy: Copy): AppProcess {
  const env = (extra: Record<string, string>) => () =>
    appEnvironment(stack.addresses, {
      SENDLINE_INSTANCE_ID: `copy-${copy}`,
      SENDLINE_SECRET_KEY: process.env.SENDLINE_SECRET_KEY ?? '',
      CLICKHOUSE_DATABASE: activity.database,
      SENDLINE_DNS_SERVERS: dns.address,
      LOG_LEVEL: 'info',
      ...extra,
    });
  if (kind === 'mx')
    return new AppProcess('mx', 'apps/mx/src/main.ts', env({ SENDLINE_MX_PORT: String(mxPorts.get(copy)) }));
  if (kind === 'returns')
    return new AppProcess('returns', 'apps/returns/src/main.ts', env({ SENDLINE_RETURNS_SESSION_TIMEOUT_MS: '6000' }));
  return new AppProcess('inbound', 'apps/inbound/src/main.ts', env({ SENDLINE_INBOUND_SESSION_TIMEOUT_MS: '6000' }));
}

const KINDS = ['mx', 'returns', 'inbound'] as const;
const STARTED_LINE = { mx: 'mx listening', returns: 'returns reader started', inbound: 'inbound reader started' };

/** The copies (`<kind>-<copy>`) whose process said it started, since it was last started. */
const startedCopies = new Set<string>();

/**
 * Starts copy `copy` of every app (again: the MX on its port); `waitForCopy` waits until each says it started. Told
 * as the line arrives, not looked for in the output kept: under load an MX logs its first mails' lines before the
 * test looks, and the output kept is the last 20 kB only.
 */
function startCopy(copy: Copy): void {
  for (const kind of KINDS) {
    const name = `${kind}-${copy}`;
    startedCopies.delete(name);
    const app = appOf(kind, copy).start();
    app.onLine((line) => {
      if (line.includes(`"msg":"${STARTED_LINE[kind]}"`)) startedCopies.add(name);
    });
    apps.set(name, app);
    everyApp.push(app);
  }
}

async function waitForCopy(copy: Copy): Promise<void> {
  for (const kind of KINDS) {
    const app = apps.get(`${kind}-${copy}`)!;
    await waitUntil(
      () => startedCopies.has(`${kind}-${copy}`) || logLines(app).some((line) => line.msg === STARTED_LINE[kind]),
      120_000,
      () => `${kind} copy ${copy} to start:\n${app.output}`,
    );
  }
}

/** Which copy a group member is, by its Kafka client id (`<app>-copy-<a|b>`). */
const copyOf = (clientId: string) => /-copy-([ab])$/.exec(clientId)?.[1] as Copy | undefined;

/** Per group (stable ones only): the partitions of mail.received each copy holds. */
async function assignments(): Promise<Map<string, Map<Copy, number[]>>> {
  const { groups } = await admin.describeGroups(GROUPS);
  const result = new Map<string, Map<Copy, number[]>>();
  for (const group of groups) {
    if (group.state !== 'Stable') continue;
    const byCopy = new Map<Copy, number[]>();
    for (const member of group.members) {
      const copy = copyOf(member.clientId);
      if (!copy) continue;
      const decoded = AssignerProtocol.MemberAssignment.decode(member.memberAssignment);
      byCopy.set(copy, [...(byCopy.get(copy) ?? []), ...(decoded?.assignment[store.topics.received] ?? [])]);
    }
    result.set(group.groupId, byCopy);
  }
  return result;
}

/** Per group: its committed offset on each partition of mail.received. */
async function committed(): Promise<Map<string, Map<number, number>>> {
  const result = new Map<string, Map<number, number>>();
  for (const groupId of GROUPS) {
    const [offsets] = await admin.fetchOffsets({ groupId, topics: [store.topics.received] });
    result.set(groupId, new Map((offsets?.partitions ?? []).map((p) => [p.partition, Math.max(0, Number(p.offset))])));
  }
  return result;
}

const show = (held: Map<string, Map<Copy, number[]>>) =>
  Object.fromEntries([...held].map(([group, byCopy]) => [group, Object.fromEntries(byCopy)]));

/** How long each step of the setup took, ms (the test's figures). */
const setupMs: Record<string, number> = {};
const mails: Mail[] = [];

beforeAll(async () => {
  let since = Date.now();
  const step = (name: string) => {
    setupMs[name] = Date.now() - since;
    since = Date.now();
  };
  // Kafka (three brokers) and Redis private; the activity store a database of its own on the shared
  // ClickHouse (what the apps need of it is one database).
  stack = await startPrivateStack({
    name: 'chaos-two-copies-mail',
    brokers: 3,
    services: ['kafka', 'redis'],
  });
  step('privateStack');
  store = new EventStore({
    brokers: stack.addresses.kafkaBrokers,
    registryUrl: stack.addresses.schemaRegistryUrl,
    clientId: 'chaos-two-copies-mail',
  });
  admin = store.kafka.admin();
  await admin.connect();
  redis = createRedis(stack.addresses.redisUrl);
  activity = await freshActivityDatabase('test_chaos_copies_mail');
  dns = await startDnsServer({ zone: new MemoryZone() });
  receiver = await Receiver.start(() => 200);
  for (const copy of COPIES) mxPorts.set(copy, await freePort());

  // The organization: its inbound address and hook (straight to the accounts view, which the MX and the readers read).
  const accounts = new AccountsView(redis);
  await inboundOrganization(accounts, {
    organizationId,
    name: 'Chaos copies mail',
    inboundHash,
    hookUrl: receiver.url,
    secretKey,
  });
  // Every copy starts now (tsx, Kafka, the groups joining) while this process gets the rest ready.
  for (const copy of COPIES) startCopy(copy);

  // This process's consumers join their groups side by side.
  [tap, projector, webhooks] = await Promise.all([
    EventTap.start(
      store,
      [store.topics.messages, store.topics.suppressions],
      () => new Set([organizationId, NO_ORGANIZATION]),
    ),
    startProjector({
      store,
      redis,
      clickhouse: activity.client,
      database: activity.database,
      groupPrefix: 'chaos-projector',
      projections: ['activity', 'suppressions'],
      retention: false,
      writer: { maxDelayMs: 100 },
    }),
    Webhooks.start({
      store,
      redis,
      directory: accounts,
      secretKey,
      config: {
        ...webhooksConfigFromEnv({}),
        startNewGroupsAt: 'earliest',
        allowPrivateAddresses: true,
        timeoutMs: 5000,
      },
      accept: (id) => id === organizationId,
      directoryCacheMs: 0,
      log: () => undefined,
    }),
  ]);
  step('consumersJoined');

  // DSNS messages delivered an hour ago, one recipient each, in the activity store: what the DSNs are about.
  // Sent interleaved: a DSN, an inbound mail, and so on.
  const run = randomUUID().slice(0, 8);
  const returned = await deliveredAnHourAgo(DSNS, { store, organizationId, tokenKey, activity });
  for (let i = 0; i < Math.max(DSNS, INBOUND); i++) {
    const dsn = returned[i];
    if (dsn) mails.push({ kind: 'dsn', id: dsn.messageId, ...dsn });
    if (i < INBOUND) mails.push({ kind: 'inbound', id: `copies ${run} ${i}` });
  }
  step('seeded');
  for (const copy of COPIES) await waitForCopy(copy);
  step('appsStarted');
}, 300_000);

afterAll(async () => {
  const started = Date.now();
  await Promise.all([...apps.values()].map((app) => app.kill()));
  await Promise.all([
    webhooks?.stop().catch(() => undefined),
    projector?.stop().catch(() => undefined),
    tap?.stop().catch(() => undefined),
    receiver?.close(),
    dns?.close(),
    admin?.disconnect().catch(() => undefined),
  ]);
  await store?.disconnect();
  redis?.disconnect();
  await Promise.all([activity?.drop(), stack?.stop()]);
  console.log(`two copies (mail): stopped in ${Date.now() - started} ms`);
}, 120_000);

describe('two copies of the MX, the returns reader and the inbound reader, one of each killed mid-load', () => {
  it(
    'split the work, and lose no mail answered 250, apply no bounce twice, post each inbound mail once',
    { timeout: 300_000 },
    async () => {
      const started = Date.now();
      const dsns = mails.flatMap((mail) => (mail.kind === 'dsn' ? [mail] : []));

      // Both copies of each reader are members of its group and hold partitions of mail.received before the load.
      let held = new Map<string, Map<Copy, number[]>>();
      await waitUntil(
        async () => {
          held = await assignments();
          return GROUPS.every((group) => COPIES.every((copy) => (held.get(group)?.get(copy)?.length ?? 0) > 0));
        },
        120_000,
        () => `both copies to hold partitions in every group: ${JSON.stringify(show(held))}`,
      );
      const atLoadStart = await committed();
      const readyAt = Date.now();

      const loader = new Loader(mails);
      const loading = loader.run();

      // Mid-load, once both copies have done work: each MX answered 250s, and each reader's group committed past mail
      // on partitions that copy held at the load's start and still holds.
      let heldAtKill = held;
      let atKill = atLoadStart;
      const advanced = (group: string, copy: Copy) =>
        (held.get(group)!.get(copy) ?? [])
          .filter((partition) => heldAtKill.get(group)?.get(copy)?.includes(partition))
          .reduce((sum, p) => sum + (atKill.get(group)!.get(p) ?? 0) - (atLoadStart.get(group)!.get(p) ?? 0), 0);
      await waitUntil(
        async () => {
          [heldAtKill, atKill] = await Promise.all([assignments(), committed()]);
          return (
            COPIES.every((copy) => loader.answeredBy.get(copy)! >= 5) &&
            GROUPS.every((group) => COPIES.every((copy) => advanced(group, copy) > 0))
          );
        },
        120_000,
        () => `both copies of every app to have done work: ${JSON.stringify(show(heldAtKill))}`,
      );
      const workBeforeKill = {
        mx: Object.fromEntries(loader.answeredBy),
        ...Object.fromEntries(
          GROUPS.map((group) => [
            group,
            Object.fromEntries(
              COPIES.map((copy) => [
                copy,
                { partitions: heldAtKill.get(group)?.get(copy), committed: advanced(group, copy) },
              ]),
            ),
          ]),
        ),
      };
      console.log(`two copies (mail), the work of each before the kill: ${JSON.stringify(workBeforeKill)}`);
      const killedAt = Date.now();
      const handedOverAtKill = loader.handedOver.size;
      await Promise.all([...apps].filter(([name]) => name.endsWith('-b')).map(([, app]) => app.kill('SIGKILL')));

      // Copy b is started again at once: while it starts, the load goes on through MX copy a, and copy a takes over
      // b's partitions once b's session has run out (if b's new readers have not joined by then: watched, a figure).
      startCopy('b');
      let handedOverWhileBDown = -1;
      const stopWatchingMx = apps.get('mx-b')!.onLine((line) => {
        if (!line.includes('"msg":"mx listening"')) return;
        handedOverWhileBDown = loader.handedOver.size - handedOverAtKill;
        stopWatchingMx();
      });
      const heldEverything = new Set<string>();
      let watching = true;
      const watchingGroups = (async () => {
        while (watching) {
          const now = await assignments().catch(() => new Map<string, Map<Copy, number[]>>());
          for (const group of GROUPS) if (now.get(group)?.get('a')?.length === 6) heldEverything.add(group);
          await sleep(250);
        }
      })();
      await loading;
      const loadEndedAt = Date.now();

      // Every DSN answered 250 applied: its HardBounced in the log, its recipient suppressed in the Redis view.
      const handedOverDsns = dsns.filter((dsn) => loader.handedOver.has(dsn.id));
      const handedOverInbound = mails.filter((mail) => mail.kind === 'inbound' && loader.handedOver.has(mail.id));
      const suppressions = new SuppressionView(redis);
      const bouncesMissing = async () => {
        const bounced = new Set(
          tap
            .events((e) => e.type === 'MessageHardBounced')
            .map((e) => `${dataOf(e).messageId} ${dataOf(e).recipient}`),
        );
        const suppressed = await suppressions.suppressedAmong(
          organizationId,
          handedOverDsns.map((dsn) => dsn.recipient),
        );
        return handedOverDsns.filter(
          (dsn) => !bounced.has(`${dsn.messageId} ${dsn.recipient}`) || !suppressed.has(dsn.recipient),
        );
      };
      const posted = () => new Set(receiver.calls.map((call) => call.json.Subject as string));
      const inboundMissing = () => handedOverInbound.filter((mail) => !posted().has(mail.id));
      let bouncesLeft = DSNS;
      await waitUntil(
        async () => {
          bouncesLeft = (await bouncesMissing()).length;
          return bouncesLeft === 0 && inboundMissing().length === 0;
        },
        60_000,
        () =>
          `every mail answered 250 to be applied: bounces missing ${bouncesLeft}, inbound ${inboundMissing().length}`,
      ).catch(async (error: unknown) => {
        // What became of the mail missing: its events, its suppression, the groups' offsets, the readers' warnings.
        const missing = await bouncesMissing();
        const suppressed = await suppressions.suppressedAmong(
          organizationId,
          missing.map((dsn) => dsn.recipient),
        );
        const ends = await admin.fetchTopicOffsets(store.topics.received);
        const offsets = await committed();
        const deadLetters = await admin
          .fetchTopicOffsets(`${store.topics.received}.dead-letter`)
          .then((partitions) => partitions.reduce((n, p) => n + Number(p.high), 0))
          .catch(() => 'none');
        const warnings = everyApp
          .filter((app) => app.name !== 'mx')
          .map(
            (app) =>
              `${app.name} pid ${app.pid}: ${app.ownOutput
                .split('\n')
                .filter((line) => /"level":(40|50)/.test(line))
                .join('\n')}`,
          );
        throw new Error(
          `${String(error)}\n${missing
            .map(
              (dsn) =>
                `${dsn.messageId} ${dsn.recipient}: events ${tap
                  .ofMessage(dsn.messageId)
                  .map((e) => e.type)
                  .join(',')}, suppressed ${suppressed.has(dsn.recipient)}`,
            )
            .join(
              '\n',
            )}\nends ${JSON.stringify(ends)}\ncommitted ${JSON.stringify([...offsets].map(([g, m]) => [g, [...m]]))}\ndead letters ${deadLetters}\n${warnings.join('\n')}`,
          { cause: error },
        );
      });
      await sleep(2000); // a late second post or event would come now
      const appliedAt = Date.now();

      // Copy b is back: it holds partitions of both groups again, and its MX answers.
      await waitForCopy('b');
      let heldAfter = new Map<string, Map<Copy, number[]>>();
      await waitUntil(
        async () => {
          heldAfter = await assignments();
          return GROUPS.every((group) => COPIES.every((copy) => (heldAfter.get(group)?.get(copy)?.length ?? 0) > 0));
        },
        120_000,
        () => `copy b to hold partitions again: ${JSON.stringify(show(heldAfter))}`,
      );
      const backAt = Date.now();
      watching = false;
      await watchingGroups;

      // Applied twice: more than one event id of a HardBounced per message and recipient, of a SuppressionAdded per
      // address. The same event read again (appended again after the kill: the same derived id) is one to every reader.
      const idsPer = (type: string, keyOf: (event: StoredEvent) => string) => {
        const ids = new Map<string, Set<string>>();
        for (const event of tap.allEvents((e) => e.type === type && e.metadata.organizationId === organizationId)) {
          const key = keyOf(event);
          ids.set(key, (ids.get(key) ?? new Set()).add(event.metadata.eventId));
        }
        return ids;
      };
      const bounceIds = idsPer('MessageHardBounced', (e) => `${dataOf(e).messageId} ${dataOf(e).recipient}`);
      const suppressionIds = idsPer('SuppressionAdded', (e) => dataOf(e).emailAddress as string);
      const suppressed = await redis.hlen(`sl:{suppressions}:${organizationId}`);

      // The hook's posts: per inbound message (its MessageID), its Webhook-Ids and posts; per mail (subject) its messages.
      const postsOf = new Map<string, { ids: Set<string>; posts: number[] }>();
      const messagesOf = new Map<string, Set<string>>();
      for (const call of receiver.calls) {
        const messageId = String(call.json.MessageID);
        const entry = postsOf.get(messageId) ?? { ids: new Set<string>(), posts: [] };
        entry.ids.add(String(call.headers['webhook-id']));
        entry.posts.push(call.at);
        postsOf.set(messageId, entry);
        const subject = call.json.Subject as string;
        messagesOf.set(subject, (messagesOf.get(subject) ?? new Set()).add(messageId));
      }
      const postedTwice = [...postsOf].filter(([, entry]) => entry.posts.length > 1);
      const twoMessagesForOneMail = [...messagesOf].filter(([, ids]) => ids.size > 1);
      const receivedOnTopic = (await admin.fetchTopicOffsets(store.topics.received)).reduce(
        (n, p) => n + Number(p.high),
        0,
      );

      const summary = {
        dsns: DSNS,
        inbound: INBOUND,
        answered250: loader.handedOver.size,
        answered250ByMx: Object.fromEntries(loader.answeredBy),
        attempts: loader.attempts,
        resent: loader.resent.size,
        mailReceivedOnTopic: receivedOnTopic,
        bouncesLost: (await bouncesMissing()).length,
        hardBounced: bounceIds.size,
        hardBouncedWithTwoIds: [...bounceIds.values()].filter((ids) => ids.size > 1).length,
        hardBouncedReappendedSameId:
          tap.allEvents((e) => e.type === 'MessageHardBounced').length -
          tap.events((e) => e.type === 'MessageHardBounced').length,
        suppressionsAdded: suppressionIds.size,
        suppressionsWithTwoIds: [...suppressionIds.values()].filter((ids) => ids.size > 1).length,
        suppressed,
        inboundLost: inboundMissing().length,
        inboundMessagesPosted: postsOf.size,
        hookPosts: receiver.calls.length,
        inboundPostedTwice: postedTwice.length,
        inboundPostedTwiceMsAfterKill: postedTwice.map(([, entry]) => entry.posts.map((t) => t - killedAt)),
        inboundMessagesWithTwoWebhookIds: [...postsOf.values()].filter((entry) => entry.ids.size > 1).length,
        inboundMailsPostedAsTwoMessages: twoMessagesForOneMail.length,
        inboundMailsPostedAsTwoMessagesAfterAResend: twoMessagesForOneMail.filter(([subject]) =>
          loader.resent.has(subject),
        ).length,
        handedOverWhileBDown,
        setupMs,
        readyMs: readyAt - started,
        killedAtMs: killedAt - readyAt,
        copyAHeldEveryPartitionOf: [...heldEverything],
        loadMs: loadEndedAt - readyAt,
        appliedMs: appliedAt - readyAt,
        bBackWithinMs: backAt - killedAt,
        totalMs: Date.now() - started,
      };
      console.log(`two copies (mail): ${JSON.stringify(summary)}`);
      if (postedTwice.length > 0) {
        // Which reader recorded each message posted twice, and what it said around it.
        const ids = postedTwice.map(([messageId]) => messageId);
        for (const app of everyApp.filter((candidate) => candidate.name === 'inbound')) {
          const lines = app.ownOutput
            .split('\n')
            .filter((line) => ids.some((id) => line.includes(id)) || line.includes('"level":40'));
          console.log(`two copies (mail), inbound reader pid ${app.pid}:\n${lines.join('\n')}`);
        }
      }
      console.log(`two copies (mail), the partitions after copy b came back: ${JSON.stringify(show(heldAfter))}`);

      for (const copy of COPIES) {
        expect(loader.answeredBy.get(copy), `mx ${copy}`).toBeGreaterThan(0);
        for (const group of GROUPS) expect(advanced(group, copy), `${group}, copy ${copy}`).toBeGreaterThan(0);
      }
      // MX copy a took mail while copy b was down (-1: b never said it listens again, which waitForCopy rules out).
      expect(handedOverWhileBDown).toBeGreaterThan(0);
      expect(loader.handedOver.size).toBe(DSNS + INBOUND);
      expect(loader.attempts.answered5xx).toBe(0);
      expect(summary.bouncesLost).toBe(0);
      expect(summary.hardBounced).toBe(DSNS);
      expect(summary.hardBouncedWithTwoIds).toBe(0);
      expect(summary.suppressionsWithTwoIds).toBe(0);
      expect(suppressed).toBe(DSNS);
      expect(summary.inboundLost).toBe(0);
      expect(summary.inboundMessagesWithTwoWebhookIds).toBe(0);
      expect(summary.inboundMailsPostedAsTwoMessages - summary.inboundMailsPostedAsTwoMessagesAfterAResend).toBe(0);
      expect(postedTwice.map(([messageId, entry]) => `${messageId}: ${entry.posts.length} posts`)).toEqual([]);
    },
  );
});
