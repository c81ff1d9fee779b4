import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { WebhooksService, replayView } from '@sendline/application';
import { WEBHOOK_ID_MAX, type WebhookTriggersChange } from '@sendline/domain';
import {
  AccountsView,
  createRedis,
  encryptSecret,
  secretKeyFromEnv,
  type EventStore,
  type Redis,
  type TestMailServer,
  type WebhookDeliveryAttempt,
  deleteKeys,
  WebhookDeliveryLog,
} from '@sendline/infra';
import type { Sender } from '@sendline/sender';
import { disablingBy, noticesBy, Webhooks, webhooksConfigFromEnv } from '@sendline/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestOrganization,
  ensureTestSystemOrganization,
  noHostResolver,
  startTestApi,
  testSystemMail,
  type TestApi,
  type TestOrganization,
} from '../support/api';
import { call } from '../support/http';
import { addresses, deleteTopicsAndDisconnect, eventually, freshEventStore, uniqueName } from '../support/services';
import { startMailServer, startTestSender, testSenderConfig } from '../sender/support';
import { deleteTopicsUnder, Receiver } from './support';

/**
 * A webhook that failed every call for the streak the service allows is disabled, end to end on the real services:
 * the API and the sender (this process, this file's topics), the webhooks process (its own groups, retries after
 * 300 and 600 ms) with a streak of one minute (SENDLINE_WEBHOOK_DISABLE_AFTER_MS's test setting) on a clock the
 * test moves forward, and real receivers on 127.0.0.1. The streak is kept in Redis, the disabling is decided by
 * the domain and appended to the accounts topic, and a replay of that topic rebuilds it. The organization's admins
 * are told by email from the system sender, sent by the sender to the test mail server, where the test reads it.
 */

const DISABLE_AFTER_MS = 60_000;
const RETRY_DELAYS_MS = [300, 600];
const DELIVERY: WebhookTriggersChange = { delivery: { enabled: true } };

let store: EventStore;
let redis: Redis;
let api: TestApi;
let org: TestOrganization;
let mail: TestMailServer;
let sender: Sender;
let webhooks: Webhooks;
let log: WebhookDeliveryLog;
let healthy: Receiver;
let system: { organizationId: string; domain: string };
const receivers: Receiver[] = [];
const secretKey = secretKeyFromEnv();
/** The webhooks process's clock: real time moved forward by `ahead` (a streak of a minute without waiting one). */
let ahead = 0;
const clock = () => Date.now() + ahead;

const unique = (local: string) => `${local}-${randomUUID().slice(0, 8)}@dest.example.net`;
const send = (to: string) =>
  call(api.baseUrl, 'POST', '/email', {
    key: org.liveKey,
    body: { From: `alerts@${org.domain}`, To: to, Subject: 'Status', TextBody: 'All good.' },
  });

async function addWebhook(url: string) {
  const id = randomInt(1, WEBHOOK_ID_MAX);
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  await org.run({
    type: 'CreateWebhook',
    data: {
      webhookId: id,
      url,
      triggers: DELIVERY,
      signingSecretSealed: encryptSecret(secret, secretKey),
      allowHttp: true,
    },
  });
  return id;
}

async function newReceiver(answer?: Parameters<typeof Receiver.start>[0]): Promise<Receiver> {
  const started = await Receiver.start(answer);
  receivers.push(started);
  return started;
}

const getWebhook = (id: number) => call(api.baseUrl, 'GET', `/webhooks/${id}`, { key: org.liveKey });

/** The attempts of the call about `to` (newest first), once `done` says they are what the test waits for. */
const attemptsAbout = (
  webhookId: number,
  receiver: Receiver,
  to: string,
  done: (attempts: WebhookDeliveryAttempt[]) => boolean,
) =>
  eventually(
    async () => {
      const callId = receiver.about(to)[0]?.headers['webhook-id'];
      if (!callId) return undefined;
      const attempts = (await log.attempts(org.organizationId, webhookId)).filter((a) => a.callId === callId);
      return done(attempts) ? attempts : undefined;
    },
    30_000,
    `the attempts of the call about ${to}`,
  );
const settled = (attempts: WebhookDeliveryAttempt[]) => attempts[0] !== undefined && attempts[0].status !== 'Retrying';

beforeAll(async () => {
  store = await freshEventStore('test-webhooks-disable');
  redis = createRedis(addresses.redisUrl);
  // The webhook use case on the test's clock, for the API's routes and the webhooks process alike: the domain
  // judges a streak at the command's time, and a PUT's time starts a new one.
  const service = new WebhooksService({
    store,
    view: new AccountsView(redis),
    secretKey: () => secretKey,
    development: false,
    resolveHost: noHostResolver,
    now: clock,
  });
  api = await startTestApi({ store, webhooks: service });
  org = await createTestOrganization(api.deps);
  await org.run({ type: 'AddMember', data: { email: 'second-admin@example.test', role: 'admin' } });
  await org.run({ type: 'AddMember', data: { email: 'dev@example.test', role: 'developer' } });
  system = await ensureTestSystemOrganization(api.deps);
  mail = await startMailServer(api.deps.accounts, [org, system]);
  sender = await startTestSender(
    api.deps,
    [org.organizationId, system.organizationId],
    testSenderConfig({ host: mail.host, port: mail.port }),
    secretKey,
  );
  healthy = await newReceiver();
  await addWebhook(healthy.url);
  log = new WebhookDeliveryLog(api.deps.redis);
  webhooks = await Webhooks.start({
    store,
    redis: api.deps.redis,
    directory: api.deps.accounts,
    secretKey,
    config: {
      ...webhooksConfigFromEnv({ SENDLINE_WEBHOOK_DISABLE_AFTER_MS: String(DISABLE_AFTER_MS) }),
      dispatcherGroupId: uniqueName('test-disable-dispatcher'),
      callerGroupId: uniqueName('test-disable-calls'),
      noticesGroupId: uniqueName('test-disable-notices'),
      startNewGroupsAt: 'latest',
      retryDelaysMs: RETRY_DELAYS_MS,
      timeoutMs: 1500,
      allowPrivateAddresses: true,
      sessionTimeoutMs: 10_000,
    },
    accept: (organizationId) => organizationId === org.organizationId,
    directoryCacheMs: 0,
    disable: disablingBy(service, () => undefined),
    notifyDisabled: noticesBy(testSystemMail(api.deps)),
    now: clock,
    log: () => undefined,
  });
});

afterAll(async () => {
  await webhooks?.stop();
  await sender?.stop();
  await mail?.stop();
  for (const started of receivers) await started.close();
  await api?.close();
  redis?.disconnect();
  if (store) {
    await deleteTopicsUnder(store, store.topics.webhookCalls);
    await deleteTopicsAndDisconnect(store);
  }
});

describe('a webhook failing every call', () => {
  it('is not disabled when a call succeeded in the middle of the streak: a success starts it again', async () => {
    let answer = 500;
    const flaky = await newReceiver(() => answer);
    const id = await addWebhook(flaky.url);

    const first = unique('first');
    await send(first);
    await attemptsAbout(id, flaky, first, (attempts) => attempts.length > 0);
    const failingSince = await log.failingSince(org.organizationId, id);
    expect(failingSince).not.toBeNull();

    // 45 s of the allowed minute later, a call is answered 200: the streak ends.
    ahead += 45_000;
    answer = 200;
    const second = unique('second');
    await send(second);
    await attemptsAbout(id, flaky, second, (attempts) => attempts[0]?.status === 'Delivered');
    expect(await log.failingSince(org.organizationId, id)).toBeNull();

    // 30 s later (75 s after the first failure, 30 s after the success) every call fails again: not disabled.
    answer = 500;
    ahead += 30_000;
    const third = unique('third');
    await send(third);
    const thirdAttempts = await attemptsAbout(id, flaky, third, settled);
    expect(thirdAttempts.map((a) => a.status)).toEqual(['Failed', 'Retrying', 'Retrying']);
    const restarted = await log.failingSince(org.organizationId, id);
    expect(restarted).toBeGreaterThan(failingSince! + 45_000);
    expect((await getWebhook(id)).body.Disabled).toBeNull();

    // A minute after that new streak began, the next failure disables it.
    ahead += DISABLE_AFTER_MS;
    const fourth = unique('fourth');
    await send(fourth);
    const disabled = await eventually(async () => (await getWebhook(id)).body.Disabled ?? undefined, 30_000);
    expect(Date.parse(disabled.FailingSince)).toBe(restarted);
  });

  it('is disabled after the streak, called no more, shown by GET, rebuilt by a replay, and enabled again by a PUT', async () => {
    const dead = await newReceiver(() => ({ status: 503, body: 'down for maintenance' }));
    const id = await addWebhook(dead.url);

    const before = unique('before');
    await send(before);
    await attemptsAbout(id, dead, before, settled);
    const failingSince = (await log.failingSince(org.organizationId, id))!;
    expect((await getWebhook(id)).body.Disabled).toBeNull();

    ahead += DISABLE_AFTER_MS;
    const last = unique('last');
    await send(last);
    const answer = await eventually(async () => {
      const got = await getWebhook(id);
      return got.body.Disabled ? got : undefined;
    }, 30_000);
    expect(answer.status).toBe(200);
    expect(answer.body.Disabled).toEqual({
      At: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      FailingSince: new Date(failingSince).toISOString(),
      Reason: 'answered 503',
    });
    expect(Date.parse(answer.body.Disabled.At) - failingSince).toBeGreaterThanOrEqual(DISABLE_AFTER_MS);

    // Its organization's two admins are told by email from the system sender, delivered as any message; the
    // developer is not.
    const subject = `Webhook ${id} was disabled: every call failed since ${new Date(failingSince).toISOString()}`;
    const notices = await eventually(
      async () => {
        const found = mail.messages().filter((m) => m.subject === subject);
        return found.length >= 2 ? found : undefined;
      },
      60_000,
      'the admins’ notices at the mail server',
    );
    expect(notices.flatMap((m) => m.recipients.map((r) => r.toLowerCase())).sort()).toEqual([
      'admin@example.test',
      'second-admin@example.test',
    ]);
    for (const notice of notices) {
      // The envelope sender is a return-path address (the system domain's return path, or the service's own).
      expect(notice.envelopeFrom).toMatch(/^b\.[a-z2-7]{44}@bounces\./);
      expect(notice.from).toContain('no-reply@system.sendline.test');
      expect(notice.dkim).toMatchObject({ result: 'pass', domain: system.domain });
      const text = notice.raw!.toString('utf8');
      expect(text).toContain(dead.url);
      expect(text).toContain('answered 503');
    }
    // The list shows it too, and Postmark's fields are all still there.
    const listed = await call(api.baseUrl, 'GET', '/webhooks', { key: org.liveKey });
    expect(listed.body.Webhooks.find((w: { ID: number }) => w.ID === id)).toMatchObject({
      ID: id,
      Url: dead.url,
      Triggers: { Delivery: { Enabled: true } },
      Disabled: answer.body.Disabled,
    });

    // The call that disabled it is given up at once (no retry), and logged so.
    const lastAttempts = await attemptsAbout(id, dead, last, settled);
    expect(lastAttempts[0]).toMatchObject({ status: 'Failed', attempt: 1, httpStatus: 503 });
    expect(lastAttempts[0]!.error).toMatch(/given up: the webhook is disabled/);

    // No call is made after: a later event reaches the healthy webhook of the organization, not this one.
    const callsThen = dead.calls.length;
    const after = unique('after');
    await send(after);
    await eventually(async () => (healthy.about(after).length > 0 ? true : undefined), 30_000);
    await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[0]! + RETRY_DELAYS_MS[1]! + 500));
    expect(dead.calls.length).toBe(callsThen);
    expect(dead.about(after)).toEqual([]);

    // `replay accounts` rebuilds the disabled state from the log alone (into a namespace of its own).
    const namespace = uniqueName('test-disable-replay');
    try {
      const report = await replayView('accounts', {
        store,
        redis: api.deps.redis,
        namespace,
        liveGroupId: uniqueName('no-live-projection'),
        force: true,
        waitForLiveMs: 1000,
        settleMs: 100,
      });
      expect(report).toMatchObject({ swapped: true });
      const rebuilt = await new AccountsView(api.deps.redis, namespace).webhook(org.organizationId, id);
      const live = await api.deps.accounts.webhook(org.organizationId, id);
      expect(rebuilt?.disabled).toEqual(live?.disabled);
      expect(rebuilt?.disabled).toMatchObject({ failingSince, reason: 'answered 503' });
    } finally {
      await deleteKeys(api.deps.redis, `${namespace}*`);
    }

    // A PUT, even one that changes nothing, enables it again: the next event is called.
    const put = await call(api.baseUrl, 'PUT', `/webhooks/${id}`, { key: org.liveKey, body: {} });
    expect(put.status).toBe(200);
    expect(put.body.Disabled).toBeNull();
    expect((await getWebhook(id)).body.Disabled).toBeNull();
    const again = unique('again');
    await send(again);
    await eventually(async () => (dead.about(again).length > 0 ? true : undefined), 30_000);

    // Nobody else got a notice of it, and none came twice.
    const all = mail.messages().filter((m) => m.subject?.startsWith(`Webhook ${id} was disabled`));
    expect(all.flatMap((m) => m.recipients)).not.toContain('dev@example.test');
    expect(all).toHaveLength(2);
  });
});
