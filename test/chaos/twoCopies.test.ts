import { randomBytes, randomInt } from 'node:crypto';
import { AssignerProtocol, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowancePeriod, WEBHOOK_ID_MAX } from '@sendline/domain';
import { replayView, type ReplayableView } from '@sendline/application';
import {
  AccountsView,
  AllowanceCounter,
  createClickHouse,
  createRedis,
  encryptSecret,
  EventStore,
  secretKeyFromEnv,
  type ClickHouseClient,
  type Redis,
  type StoredEvent,
  type TestMailServer,
} from '@sendline/infra';
import { createTestOrganization, type TestOrganization } from '../support/api';
import { freePort } from '../support/ports';
import { startPrivateStack, type PrivateStack } from '../support/privateStack';
import { dataOf, EventTap, startMailServer } from '../sender/support';
import { connectionOwner, Receiver, type ReceivedCall } from '../webhooks/support';
import {
  AnsweredCopies,
  apiApp,
  AppProcess,
  appEnvironment,
  GUARD_WINDOW_MS,
  keyedLoad,
  projectorApp,
  readyz,
  senderApp,
  sleep,
  summarize,
  waitUntil,
  type KeyedSend,
} from './harness';

/**
 * Issue 38, part 1: two copies of every long-running app at once — the API, the sender, the projector and the
 * webhooks process — on the three-broker Kafka, each copy with its own instance id (SENDLINE_INSTANCE_ID: its Kafka
 * client id) and its own ports, the consumers splitting every topic's partitions between them through their groups
 * (docs/scaling.md). A keyed load of 2,000 messages (one in ten to an address the mail server refuses: a hard bounce,
 * a suppression) goes half to each API copy, and a webhook receives every delivery and bounce. Once both copies of
 * every app have done work (the partitions each holds and how far its group committed on them, the API answers each
 * copy gave), one copy of each app is SIGKILLed at once mid-load, then started again. Counted: nothing accepted lost
 * (every message delivered or bounced), nothing delivered twice outside the sender's guard window (docs/sender.md),
 * one Webhook-Id per event and no call made twice that the kill does not explain (docs/scaling.md), every view
 * equal to a replay of its topics, and the allowance equal to the log.
 */

const PER_API = 1000;
const RATE_PER_API = 50;
const KILL_AFTER_MS = 8000;
/**
 * How long after the kill the mail server may answer a transaction the killed sender had finished sending (its 250
 * then reaches no one): 0.8–17 ms in senderLoad.test.ts, up to 361 ms here on a machine at load average 20.
 */
const LOST_REPLY_MS = 2000;
const COPIES = ['a', 'b'] as const;
type Copy = (typeof COPIES)[number];

let stack: PrivateStack;
let store: EventStore;
let redis: Redis;
let clickhouse: ClickHouseClient;
let admin: Admin;
let org: TestOrganization;
let mail: TestMailServer;
let receiver: Receiver;
let tap: EventTap;
const answered = new AnsweredCopies();
const preciseNow = () => performance.timeOrigin + performance.now();
const apps = new Map<string, AppProcess>();
const apiUrls = new Map<Copy, string>();

const webhooksApp = (env: () => NodeJS.ProcessEnv) => new AppProcess('webhooks', 'apps/webhooks/src/main.ts', env);
/** The webhooks copies' log lines about a call (`webhook call …`), as they came. */
const webhookCallTrouble: { copy: string; at: number; line: string }[] = [];
/**
 * Which process made each webhook call: the owner of the call's connection (its port on the caller's side), found
 * in the system's tables while the call waits for its answer, once per connection (connectionOwner).
 */
const callerOfPort = new Map<number, number | undefined>();
const callerOf = (call: ReceivedCall) => callerOfPort.get(call.remotePort);

beforeAll(async () => {
  stack = await startPrivateStack({ name: 'chaos-two-copies', brokers: 3 });
  const services = stack.addresses;
  redis = createRedis(services.redisUrl);
  store = new EventStore({
    brokers: services.kafkaBrokers,
    registryUrl: services.schemaRegistryUrl,
    clientId: 'chaos-two-copies',
  });
  clickhouse = createClickHouse(services.clickhouseUrl);
  admin = store.kafka.admin();
  await admin.connect();
  const accounts = new AccountsView(redis);
  org = await createTestOrganization({ store, accounts, mailHost: 'mail.sendline.test' }, { allowance: 1_000_000 });
  mail = await startMailServer(accounts, [org], {
    keepRaw: false,
    maxKept: 0,
    verifyDkim: 10,
    // onMessage runs right before the server answers 250 to the final dot.
    onMessage: (message) => answered.record(message, preciseNow()),
  });
  receiver = await Receiver.start((call) => {
    if (!callerOfPort.has(call.remotePort)) {
      const pids = COPIES.flatMap((copy) => apps.get(`webhooks-${copy}`)?.pid ?? []);
      callerOfPort.set(call.remotePort, connectionOwner(call.remotePort, Number(new URL(receiver.url).port), pids));
    }
    return 200;
  });
  await org.run({
    type: 'CreateWebhook',
    data: {
      webhookId: randomInt(1, WEBHOOK_ID_MAX),
      url: receiver.url,
      triggers: { delivery: { enabled: true }, bounce: { enabled: true } },
      signingSecretSealed: encryptSecret(`whsec_${randomBytes(32).toString('base64')}`, secretKeyFromEnv()),
      allowHttp: true,
    },
  });
  const mine = new Set([org.organizationId]);
  tap = await EventTap.start(store, [store.topics.messages], () => mine);

  for (const copy of COPIES) {
    const env = (extra: Record<string, string>) => () =>
      appEnvironment(services, { SENDLINE_INSTANCE_ID: `copy-${copy}`, ...extra });
    const apiPort = await freePort();
    apiUrls.set(copy, `http://127.0.0.1:${apiPort}/v1`);
    // One worker per copy: the two copies are the API's processes here (two cores for everything).
    apps.set(`api-${copy}`, apiApp(env({ SENDLINE_API_PORT: String(apiPort), SENDLINE_API_WORKERS: '1' })));
    apps.set(
      `sender-${copy}`,
      senderApp(env({ SENDLINE_SMTP_RELAY: `${mail.host}:${mail.port}`, SENDLINE_SENDER_SESSION_TIMEOUT_MS: '6000' })),
    );
    apps.set(
      `projector-${copy}`,
      projectorApp(env({ SENDLINE_PROJECTOR_METRICS_PORT: '0', SENDLINE_PROJECTOR_SESSION_TIMEOUT_MS: '6000' })),
    );
    apps.set(
      `webhooks-${copy}`,
      webhooksApp(
        env({
          SENDLINE_WEBHOOK_ALLOW_PRIVATE: '1',
          SENDLINE_WEBHOOKS_START: 'earliest',
          SENDLINE_WEBHOOK_RETRY_DELAYS_MS: '200,400,800',
          SENDLINE_WEBHOOKS_SESSION_TIMEOUT_MS: '6000',
        }),
      ),
    );
  }
  // What the webhooks copies say of a call that failed or whose outcome was written again (with its call's id): it
  // tells a call made twice why.
  for (const copy of COPIES) {
    apps.get(`webhooks-${copy}`)!.onLine((line) => {
      if (line.includes('webhook call')) webhookCallTrouble.push({ copy, at: Date.now(), line: line.slice(0, 400) });
    });
  }
  for (const app of apps.values()) app.start();
  for (const copy of COPIES) {
    await waitUntil(
      async () => (await readyz(apiUrls.get(copy)!)) === 200,
      300_000,
      () => `API copy ${copy} to be ready:\n${apps.get(`api-${copy}`)!.output}`,
    );
  }
});

afterAll(async () => {
  await Promise.all([...apps.values()].map((app) => app.kill()));
  await tap?.stop();
  await receiver?.close();
  await mail?.stop();
  await admin?.disconnect().catch(() => undefined);
  await store?.disconnect();
  redis?.disconnect();
  await clickhouse?.close();
  await stack?.stop();
});

/** Which copy a group member is, by its Kafka client id (`<app>-copy-<a|b>`, SENDLINE_INSTANCE_ID). */
function copyOf(clientId: string): Copy | undefined {
  return /-copy-([ab])(?:-w\d+)?$/.exec(clientId)?.[1] as Copy | undefined;
}

/** Per group: each member's copy and the partitions it holds, `topic[partition]` (a stable group's only). */
async function assignments(groups: string[]): Promise<Map<string, Map<Copy, string[]>>> {
  const { groups: described } = await admin.describeGroups(groups);
  const result = new Map<string, Map<Copy, string[]>>();
  for (const group of described) {
    const byCopy = new Map<Copy, string[]>();
    if (group.state !== 'Stable') continue;
    for (const member of group.members) {
      const copy = copyOf(member.clientId);
      if (!copy) continue;
      byCopy.set(copy, byCopy.get(copy) ?? []);
      if (member.memberAssignment.length === 0) continue;
      const decoded = AssignerProtocol.MemberAssignment.decode(member.memberAssignment);
      const held = Object.entries(decoded?.assignment ?? {}).flatMap(([topic, partitions]) =>
        partitions.map((partition) => `${topic}[${partition}]`),
      );
      byCopy.set(copy, [...(byCopy.get(copy) ?? []), ...held]);
    }
    result.set(group.groupId, byCopy);
  }
  return result;
}

/** Per group: its committed offset on each `topic[partition]` it consumes. */
async function committed(groups: string[], topicsOf: Map<string, string[]>): Promise<Map<string, Map<string, number>>> {
  const fetched = await Promise.all(
    groups.map(async (groupId) => {
      const offsets = new Map<string, number>();
      for (const { topic, partitions } of await admin.fetchOffsets({ groupId, topics: topicsOf.get(groupId)! })) {
        for (const { partition, offset } of partitions)
          offsets.set(`${topic}[${partition}]`, Math.max(0, Number(offset)));
      }
      return [groupId, offsets] as const;
    }),
  );
  return new Map(fetched);
}

/** The topics each group's members are assigned (what `committed` asks about). */
function topicsOfGroups(held: Map<string, Map<Copy, string[]>>): Map<string, string[]> {
  return new Map(
    [...held].map(([group, byCopy]) => [
      group,
      [...new Set([...byCopy.values()].flat().map((slot) => slot.replace(/\[\d+\]$/, '')))],
    ]),
  );
}

/** The groups of the three consuming apps: the sender's, the projector's (one per view), the webhooks process's. */
async function appGroups(): Promise<string[]> {
  return (await admin.listGroups()).groups
    .map((group) => group.groupId)
    .filter((group) => /^(sender|sender-retries|projector-.+|webhooks-.+)$/.test(group));
}

/**
 * The groups whose work this test's load makes (email.messages, email.suppressions, webhooks.calls): each copy of
 * each app must have committed past events on the partitions it held before the kill.
 */
const BUSY_GROUPS = [
  'sender',
  'projector-activity',
  'projector-allowance',
  'projector-suppressions',
  'webhooks-dispatcher',
  'webhooks-calls',
];

describe('two copies of every app, one of each killed mid-load', () => {
  // A hang guard only: on a machine shared by other runs (load average 15-30) one pass took 150 s.
  it(
    'split the work, and lose nothing, send nothing twice, call each webhook once per event',
    { timeout: 600_000 },
    async () => {
      const started = Date.now();
      // Both copies of every consumer are members of every group, stable, before the load starts; in the busy ones
      // each holds partitions.
      let allGroups: string[] = [];
      let held = new Map<string, Map<Copy, string[]>>();
      await waitUntil(
        async () => {
          allGroups = await appGroups();
          if (!BUSY_GROUPS.every((group) => allGroups.includes(group))) return false;
          held = await assignments(allGroups);
          return (
            allGroups.every((group) => COPIES.every((copy) => held.get(group)?.has(copy))) &&
            BUSY_GROUPS.every((group) => COPIES.every((copy) => held.get(group)!.get(copy)!.length > 0))
          );
        },
        300_000,
        () => `both copies in every group: ${JSON.stringify([...held].map(([g, m]) => [g, Object.fromEntries(m)]))}`,
      );
      const topicsOf = topicsOfGroups(held);
      const atLoadStart = await committed(allGroups, topicsOf);
      const readyAt = Date.now();
      /** Events a copy's group committed past since the load started, on the partitions it held then and at the kill. */
      const advanced = (group: string, copy: Copy) => {
        const before = atLoadStart.get(group)!;
        const after = atKill.get(group)!;
        const same = (held.get(group)?.get(copy) ?? []).filter((slot) =>
          heldAtKill.get(group)?.get(copy)?.includes(slot),
        );
        return same.reduce((sum, slot) => sum + ((after.get(slot) ?? 0) - (before.get(slot) ?? 0)), 0);
      };

      let sequence = 0;
      const message = (copy: Copy, i: number) => ({
        From: `Copies <copies@${org.domain}>`,
        // One in ten to an address the mail server refuses (550 5.1.1): a hard bounce, a suppression, a Bounce call.
        To:
          i % 10 === 0 ? `hardbounce-${copy}${i}-${++sequence}@example.net` : `r-${copy}${i}-${++sequence}@example.net`,
        Subject: `Message ${copy}${i}`,
        TextBody: 'Hello from two copies.',
      });
      const loads = new Map<Copy, Promise<KeyedSend[]>>(
        COPIES.map((copy) => [
          copy,
          keyedLoad({
            baseUrl: apiUrls.get(copy)!,
            // A send the killed copy does not answer is sent again, with its key, to the other.
            otherBaseUrls: COPIES.filter((other) => other !== copy).map((other) => apiUrls.get(other)!),
            apiKey: org.liveKey,
            count: PER_API,
            ratePerSecond: RATE_PER_API,
            message: (i) => message(copy, i),
            requestTimeoutMs: 30_000,
            maxInFlight: 50,
            retryForMs: 60_000,
            retryDelayMs: 500,
          }),
        ]),
      );

      // Mid-load, once both copies of each app have done work (committed past events on the partitions they held
      // since the load started, in every busy group), one copy of each app is killed at once, and started again.
      let heldAtKill = new Map<string, Map<Copy, string[]>>();
      let atKill = new Map<string, Map<string, number>>();
      await sleep(KILL_AFTER_MS);
      await waitUntil(
        async () => {
          [heldAtKill, atKill] = await Promise.all([assignments(allGroups), committed(allGroups, topicsOf)]);
          if (BUSY_GROUPS.every((group) => COPIES.every((copy) => advanced(group, copy) > 0))) return true;
          await sleep(500);
          return false;
        },
        300_000,
        'both copies of every app to have done work',
      );
      const killedAt = preciseNow();
      const killedWebhooksPid = apps.get('webhooks-b')!.pid;
      await Promise.all(
        COPIES.slice(1)
          .flatMap((copy) => [...apps].filter(([name]) => name.endsWith(`-${copy}`)))
          .map(([, app]) => app.kill()),
      );
      const deliveredAtKill = mail.received;
      for (const [name, app] of apps) if (name.endsWith('-b')) app.start();
      // Copy b coming back is checked at the end: meanwhile the load and the drain go on through copy a.

      const sendsByCopy = new Map<Copy, KeyedSend[]>();
      for (const copy of COPIES) sendsByCopy.set(copy, await loads.get(copy)!);
      const sends = [...sendsByCopy.values()].flat();
      const summary = summarize(sends);
      const loadEndedAt = Date.now();
      expect(summary.unanswered, JSON.stringify(summary)).toBe(0);
      expect(summary.distinctMessageIds).toBe(sends.length);
      const bouncing = new Set(
        sends.filter((send) => String(send.body.To).startsWith('hardbounce-')).map((s) => s.messageId!),
      );
      const accepted = new Set(sends.map((send) => send.messageId!));

      // What each copy did before the kill: API answers, and per group the offsets committed on the partitions it held.
      const workBeforeKill: Record<string, Record<Copy, unknown>> = {};
      for (const copy of COPIES) {
        // The 200s each copy gave before the kill (whichever load's send it was).
        (workBeforeKill.api ??= {} as Record<Copy, unknown>)[copy] = sends
          .flatMap((send) => send.answers)
          .filter((answer) => answer.baseUrl === apiUrls.get(copy) && answer.status === 200)
          .filter((answer) => answer.at + answer.ms < killedAt).length;
      }
      for (const group of allGroups) {
        workBeforeKill[group] = Object.fromEntries(
          COPIES.map((copy) => [
            copy,
            { partitions: heldAtKill.get(group)?.get(copy) ?? [], committed: advanced(group, copy) },
          ]),
        ) as Record<Copy, unknown>;
      }
      console.log(`two copies, the work of each before the kill: ${JSON.stringify(workBeforeKill)}`);

      // Nothing accepted lost: every message delivered (answered 250) or hard-bounced (its MessageHardBounced logged).
      const outcomeOf = () => {
        const outcomes = new Map<string, string>();
        for (const event of tap.events((e) => e.type === 'MessageDelivered' || e.type === 'MessageHardBounced')) {
          outcomes.set(dataOf(event).messageId as string, event.type);
        }
        return outcomes;
      };
      await waitUntil(
        () => {
          const outcomes = outcomeOf();
          return [...accepted].every((id) => outcomes.has(id));
        },
        300_000,
        () =>
          `every accepted message to be delivered or bounced: ${[...accepted].filter((id) => !outcomeOf().has(id)).length} left`,
      );
      const outcomes = outcomeOf();
      const wrongOutcome = [...accepted].filter(
        (id) => outcomes.get(id) !== (bouncing.has(id) ? 'MessageHardBounced' : 'MessageDelivered'),
      );
      const notAnswered = [...accepted].filter((id) => !bouncing.has(id) && answered.recipientsAnswered(id) === 0);

      // One webhook call per event: each delivery and each hard bounce has its call (by Webhook-Id), every call is
      // about one of them, and a call made again (the kill cut it between the answer and its record) is that call again.
      const expectedCalls = new Map<string, string>();
      for (const event of tap.events((e) => e.type === 'MessageDelivered' || e.type === 'MessageHardBounced')) {
        expectedCalls.set(dataOf(event).messageId as string, event.type === 'MessageDelivered' ? 'Delivery' : 'Bounce');
      }
      const callsOf = () => {
        const ids = new Map<string, Set<string>>();
        for (const call of receiver.calls) {
          const key = `${call.json.MessageID} ${call.json.RecordType}`;
          ids.set(key, (ids.get(key) ?? new Set()).add(String(call.headers['webhook-id'])));
        }
        return ids;
      };
      await waitUntil(
        () => {
          const calls = callsOf();
          return [...expectedCalls].every(([id, type]) => calls.has(`${id} ${type}`));
        },
        300_000,
        () => `a webhook call for every delivery and bounce: ${receiver.calls.length} calls of ${expectedCalls.size}`,
      );
      await sleep(2000); // a late second call would arrive now
      const calls = callsOf();
      const callIdsPerEvent = [...calls.values()].map((ids) => ids.size);
      const unexpectedCalls = [...calls.keys()].filter((key) => {
        const [id, type] = key.split(' ');
        return expectedCalls.get(id!) !== type;
      });
      const callsById = new Map<string, ReceivedCall[]>();
      for (const call of receiver.calls) {
        const id = String(call.headers['webhook-id']);
        callsById.set(id, [...(callsById.get(id) ?? []), call]);
      }
      const repeatedCallIds = [...callsById].filter(([, made]) => made.length > 1).map(([id]) => id);
      const repeatedCalls = repeatedCallIds.map((id) => callsById.get(id)!.map((call) => call.at));
      // Made twice: expected only of a call the killed copy made and had not recorded (its lease then expires and the
      // call is made again, with its Webhook-Id). Who made the first call is its connection's owner: the killed
      // process, or no process left (a connection of the killed copy's, gone before the call was looked at). A call
      // first made by a live copy and made again (two live copies at a rebalance, an attempt given back after its
      // call) is unexplained. By owner, not by time: under load this process read a cut call's request 2.1 s after
      // the kill.
      const unexplainedRepeats = repeatedCallIds
        .map((id) => callsById.get(id)!)
        .filter((made) => {
          const first = callerOf(made[0]!);
          return made.length > 2 || (first !== undefined && first !== killedWebhooksPid);
        })
        .map((made) => made.map((call) => ({ atMs: Math.round(call.at - killedAt), by: callerOf(call) })));
      // The calls by who made them: the killed copy, the copies alive after the kill, or a connection gone unlooked at.
      const callsByCaller = { killedCopy: 0, liveCopies: 0, gone: 0 };
      for (const call of receiver.calls) {
        const by = callerOf(call);
        if (by === undefined) callsByCaller.gone++;
        else if (by === killedWebhooksPid) callsByCaller.killedCopy++;
        else callsByCaller.liveCopies++;
      }

      // Delivered twice: only a copy whose first 250 came within the guard window before the kill, or just after it
      // (SMTP's lost reply: the killed copy had sent the final dot, the server answered once it got to it). A copy
      // whose first 250 came later than that was sent by two live copies at once (a rebalance), which nothing excuses.
      const twice = answered.copiedTwice(killedAt);
      const unexplained = twice.filter(
        (copy) => copy.copies > 2 || copy.beforeKillMs > GUARD_WINDOW_MS || copy.beforeKillMs < -LOST_REPLY_MS,
      );

      // Every view equal to a replay of its topics, and the allowance equal to the log.
      const views: ReplayableView[] = ['suppressions', 'accounts', 'allowance', 'activity'];
      const reports: Record<string, { equal: boolean; events: number; differenceCount: number }> = {};
      await waitUntil(
        async () => {
          for (const view of views) {
            const report = await replayView(view, {
              store,
              redis,
              clickhouse,
              database: stack.addresses.clickhouseDatabase,
              dryRun: true,
              waitForLiveMs: 60_000,
            });
            reports[view] = { equal: report.equal, events: report.events, differenceCount: report.differenceCount };
          }
          return views.every((view) => reports[view]!.equal);
        },
        300_000,
        () => `every view to equal its replay: ${JSON.stringify(reports)}`,
      );
      // Copy b is back: its API answers, and its consumers hold partitions of every busy group again.
      await waitUntil(
        async () => (await readyz(apiUrls.get('b')!)) === 200,
        300_000,
        () => `API copy b to be ready again:\n${apps.get('api-b')!.output}`,
      );
      let heldAfter = new Map<string, Map<Copy, string[]>>();
      await waitUntil(
        async () => {
          heldAfter = await assignments(BUSY_GROUPS);
          return BUSY_GROUPS.every((group) =>
            COPIES.every((copy) => (heldAfter.get(group)?.get(copy)?.length ?? 0) > 0),
          );
        },
        300_000,
        () =>
          `copy b to hold partitions again: ${JSON.stringify([...heldAfter].map(([g, m]) => [g, Object.fromEntries(m)]))}`,
      );
      const backAt = Date.now();
      console.log(
        `two copies, the partitions of each after copy b came back: ${JSON.stringify(Object.fromEntries([...heldAfter].map(([g, m]) => [g, Object.fromEntries(m)])))}`,
      );
      const inLog = new Set(
        tap
          .events((e) => e.type === 'MessageAccepted')
          .filter((e) => allowancePeriod(dataOf(e).submittedAt as number) === allowancePeriod(Date.now()))
          .map((e: StoredEvent) => dataOf(e).messageId as string),
      );
      const allowanceUsed = await new AllowanceCounter(redis).used(org.organizationId, allowancePeriod(Date.now()));
      const suppressed = await redis.hlen(`sl:{suppressions}:${org.organizationId}`);

      console.log(
        `two copies: ${JSON.stringify({
          ...summary,
          bounced: bouncing.size,
          // Sends one copy's load started that the other copy accepted (after no answer from the first).
          acceptedByTheOtherCopy: COPIES.map(
            (copy) =>
              sendsByCopy
                .get(copy)!
                .filter((send) => send.answers.at(-1)?.baseUrl !== apiUrls.get(copy) && send.messageId).length,
          ),
          readyMs: readyAt - started,
          killedAtMs: Math.round(killedAt - readyAt),
          copyBBackWithinMs: backAt - Math.round(killedAt),
          loadMs: loadEndedAt - readyAt,
          receivedAtKill: deliveredAtKill,
          receivedAtTheServer: mail.received,
          deliveredTwice: twice.length,
          deliveredTwiceMsBeforeKill: twice.map((copy) => Math.round(copy.beforeKillMs * 10) / 10),
          deliveredTwiceUnexplained: unexplained.length,
          webhookCalls: receiver.calls.length,
          webhookEvents: expectedCalls.size,
          webhookCallsRepeated: repeatedCalls.length,
          webhookCallsRepeatedMsBeforeKill: repeatedCalls.map((times) => Math.round(killedAt - times[0]!)),
          webhookCallsRepeatedUnexplained: unexplainedRepeats.length,
          webhookCallsByCaller: callsByCaller,
          webhookCallsRepeatedFirstBy: repeatedCallIds.map((id) => {
            const by = callerOf(callsById.get(id)![0]!);
            return by === undefined ? 'gone' : by === killedWebhooksPid ? 'killed copy' : 'live copy';
          }),
          webhookCallTroubleLines: webhookCallTrouble.length,
          webhookCallTroubleFirst: webhookCallTrouble
            .slice(0, 5)
            .map((said) => `${said.copy} ${Math.round(said.at - killedAt)} ms: ${said.line}`),
          // What the copies said of each call made twice (its id in the line), ms from the kill.
          webhookCallsRepeatedSaid: repeatedCallIds.flatMap((id) =>
            webhookCallTrouble
              .filter((said) => said.line.includes(id))
              .map((said) => `${said.copy} ${Math.round(said.at - killedAt)} ms: ${said.line}`),
          ),
          views: reports,
          allowanceUsed,
          acceptedInLog: inLog.size,
          suppressed,
          totalMs: Date.now() - started,
        })}`,
      );

      // Both copies did work before the kill: each API copy answered sends, and each copy of each consumer held
      // partitions of every group and committed past events on them.
      for (const copy of COPIES) expect(workBeforeKill.api![copy], `api ${copy}`).toBeGreaterThan(0);
      for (const group of BUSY_GROUPS) {
        for (const copy of COPIES) expect(advanced(group, copy), `${group}, copy ${copy}`).toBeGreaterThan(0);
      }
      expect(wrongOutcome).toEqual([]);
      expect(notAnswered).toEqual([]);
      expect(unexplained).toEqual([]);
      expect(unexpectedCalls).toEqual([]);
      // A call made twice that the kill does not explain: two runs of four (2026-11-29, load average 13 and more) had
      // 7 and 5, made by one live copy 6.5-7 s apart: an attempt whose outcome's write to Redis failed gave its lease
      // back and was made again. A made call's outcome is now written again instead (CallAttempts.untilWritten).
      // Who made each call is known (both copies' calls were found by their connections), so a repeat's maker is too.
      expect(callsByCaller.killedCopy, JSON.stringify(callsByCaller)).toBeGreaterThan(0);
      expect(callsByCaller.liveCopies, JSON.stringify(callsByCaller)).toBeGreaterThan(0);
      expect(
        unexplainedRepeats,
        `calls made twice (ms from the kill, by which process; the killed copy was ${killedWebhooksPid}); what the ` +
          `webhooks copies said: ${JSON.stringify(webhookCallTrouble.slice(0, 20))}`,
      ).toEqual([]);
      expect(Math.max(...callIdsPerEvent)).toBe(1);
      expect(calls.size).toBe(accepted.size);
      for (const view of views) expect(reports[view]!.equal, view).toBe(true);
      expect(inLog).toEqual(accepted);
      expect(allowanceUsed).toBe(accepted.size);
      expect(suppressed).toBe(bouncing.size);
    },
  );
});
