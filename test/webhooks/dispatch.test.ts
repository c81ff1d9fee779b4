import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { ManualSuppressions } from '@sendline/application';
import {
  decideMessage,
  suppressionDecider,
  suppressionForHardBounce,
  suppressionForSpamComplaint,
  WEBHOOK_ID_MAX,
  type MessageEvent,
  type ReturnedOutcome,
  type WebhookTriggersChange,
} from '@sendline/domain';
import {
  bounceIdOf,
  encryptSecret,
  isPublicAddress,
  secretKeyFromEnv,
  type EventStore,
  type StoredEvent,
  type TestMailServer,
  WebhookDeliveryLog,
} from '@sendline/infra';
import type { Sender } from '@sendline/sender';
import { numericId, Webhooks, webhooksConfigFromEnv, WebhookHttp } from '@sendline/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { call } from '../support/http';
import { deleteTopicsAndDisconnect, eventually, freshEventStore, uniqueName } from '../support/services';
import { startMailServer, startTestSender, testSenderConfig } from '../sender/support';
import { deleteTopicsUnder, Receiver, signatureValid, type ReceivedCall } from './support';

/**
 * The webhooks end to end on the real services: the API and the sender (in this process, on this file's own
 * topics), the webhooks process (its own groups, a short retry schedule: 300 ms then 600 ms, calls abandoned after
 * 1.5 s), and real HTTP receivers on 127.0.0.1.
 */

const TIMEOUT_MS = 1500;
const RETRY_DELAYS_MS = [300, 600];
const ALL_TRIGGERS: WebhookTriggersChange = {
  delivery: { enabled: true },
  bounce: { enabled: true },
  subscriptionChange: { enabled: true },
  spamComplaint: { enabled: true },
};

let store: EventStore;
let api: TestApi;
let org: TestOrganization;
let other: TestOrganization;
let mail: TestMailServer;
let sender: Sender;
let webhooks: Webhooks;
let log: WebhookDeliveryLog;
let receiver: Receiver;
let otherReceiver: Receiver;
let hook: { id: number; secret: string };
const receivers: Receiver[] = [];
const secretKey = secretKeyFromEnv();

const unique = (local: string) => `${local}-${randomUUID().slice(0, 8)}@dest.example.net`;
const send = (from: TestOrganization, to: string, extra: Record<string, unknown> = {}) =>
  call(api.baseUrl, 'POST', '/email', {
    key: from.liveKey,
    body: { From: `orders@${from.domain}`, To: to, Subject: 'Your receipt', TextBody: 'Thanks.', ...extra },
  });

async function addWebhook(owner: TestOrganization, url: string, triggers = ALL_TRIGGERS) {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const id = randomInt(1, WEBHOOK_ID_MAX);
  await owner.run({
    type: 'CreateWebhook',
    data: { webhookId: id, url, triggers, signingSecretSealed: encryptSecret(secret, secretKey), allowHttp: true },
  });
  return { id, secret };
}
const deleteWebhook = (owner: TestOrganization, webhookId: number) =>
  owner.run({ type: 'DeleteWebhook', data: { webhookId } });

async function newReceiver(answer?: Parameters<typeof Receiver.start>[0]): Promise<Receiver> {
  const started = await Receiver.start(answer);
  receivers.push(started);
  return started;
}

const callsOf = (target: Receiver, key: string, recordType: string, count = 1, timeoutMs = 30_000) =>
  eventually(
    async () => {
      const found = target.about(key).filter((c) => c.json.RecordType === recordType);
      return found.length >= count ? found : undefined;
    },
    timeoutMs,
    `${count} ${recordType} call(s) about ${key}`,
  );

beforeAll(async () => {
  store = await freshEventStore('test-webhooks');
  api = await startTestApi({ store });
  org = await createTestOrganization(api.deps);
  other = await createTestOrganization(api.deps);
  mail = await startMailServer(api.deps.accounts, [org, other]);
  const mine = new Set([org.organizationId, other.organizationId]);
  sender = await startTestSender(
    api.deps,
    [...mine],
    testSenderConfig({ host: mail.host, port: mail.port }),
    secretKey,
  );
  receiver = await newReceiver();
  otherReceiver = await newReceiver();
  hook = await addWebhook(org, receiver.url);
  await addWebhook(other, otherReceiver.url);
  log = new WebhookDeliveryLog(api.deps.redis);
  webhooks = await Webhooks.start({
    store,
    redis: api.deps.redis,
    directory: api.deps.accounts,
    secretKey,
    config: {
      ...webhooksConfigFromEnv({}),
      dispatcherGroupId: uniqueName('test-webhooks-dispatcher'),
      callerGroupId: uniqueName('test-webhooks-calls'),
      startNewGroupsAt: 'latest',
      retryDelaysMs: RETRY_DELAYS_MS,
      timeoutMs: TIMEOUT_MS,
      allowPrivateAddresses: true,
      sessionTimeoutMs: 10_000,
    },
    accept: (organizationId) => mine.has(organizationId),
    directoryCacheMs: 0,
    log: () => undefined,
  });
});

afterAll(async () => {
  await webhooks?.stop();
  await sender?.stop();
  await mail?.stop();
  for (const started of receivers) await started.close();
  await api?.close();
  if (store) {
    await deleteTopicsUnder(store, store.topics.webhookCalls);
    await deleteTopicsAndDisconnect(store);
  }
});

describe('a delivered message', () => {
  it('is told to the webhook as Postmark’s Delivery, with the message’s Tag and Metadata, signed', async () => {
    const to = unique('ann');
    const sent = await send(org, to, { Tag: 'receipts', Metadata: { customer: 'c-1' } });
    expect(sent.status).toBe(200);
    const [delivery] = await callsOf(receiver, to, 'Delivery');
    expect(delivery!.json).toMatchObject({
      RecordType: 'Delivery',
      MessageID: sent.body.MessageID,
      Recipient: to,
      Tag: 'receipts',
      Metadata: { customer: 'c-1' },
      MessageStream: 'outbound',
      ServerID: numericId(org.organizationId),
    });
    expect(delivery!.json.Details).toMatch(/^250 /);
    expect(new Date(delivery!.json.DeliveredAt).toISOString()).toBe(delivery!.json.DeliveredAt);
    expect(delivery!.headers['content-type']).toBe('application/json');
    expect(delivery!.headers['webhook-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(Math.abs(Number(delivery!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(signatureValid(delivery!, hook.secret)).toBe(true);
    expect(signatureValid({ ...delivery!, body: delivery!.body.replace('receipts', 'forged') }, hook.secret)).toBe(
      false,
    );
  });
});

describe('a hard bounce', () => {
  it('is told as a Bounce (HardBounce, the address inactive) and a SubscriptionChange suppressing the address', async () => {
    const to = unique('hardbounce');
    const sent = await send(org, to, { Tag: 'welcome' });
    const [bounce] = await callsOf(receiver, to, 'Bounce');
    expect(bounce!.json).toMatchObject({
      RecordType: 'Bounce',
      Type: 'HardBounce',
      TypeCode: 1,
      Email: to,
      MessageID: sent.body.MessageID,
      From: `orders@${org.domain}`,
      Subject: 'Your receipt',
      Tag: 'welcome',
      Inactive: true,
      CanActivate: true,
    });
    expect(bounce!.json.Details).toMatch(/^550 5\.1\.1/);
    const [change] = await callsOf(receiver, to, 'SubscriptionChange');
    expect(change!.json).toMatchObject({
      Recipient: to,
      SuppressSending: true,
      SuppressionReason: 'HardBounce',
      Origin: 'Recipient',
    });
    expect(signatureValid(change!, hook.secret)).toBe(true);
  });
});

/**
 * What the returned-mail reader appends when mail comes back about a delivered message's recipient: the message
 * decider's RecordReturn, then (a hard bounce, a complaint) the suppression decider's SuppressionAdded.
 */
async function comesBack(messageId: string, recipient: string, outcome: ReturnedOutcome): Promise<MessageEvent> {
  const organizationId = org.organizationId;
  const now = Date.now();
  const [event] = decideMessage(
    {
      type: 'RecordReturn',
      data: { messageId, recipient, reportId: `report-${randomUUID()}`, outcome },
      metadata: { organizationId, now, eventIds: [randomUUID()] },
    },
    {
      phase: 'Sent',
      messageId,
      organizationId,
      recipients: new Map([[recipient, { status: 'Delivered', failedAttempts: 0 }]]),
      suppressedRecipients: [],
    },
  );
  const suppression =
    event!.type === 'MessageHardBounced'
      ? suppressionForHardBounce(event!)
      : event!.type === 'MessageSpamComplaint'
        ? suppressionForSpamComplaint(event!)
        : undefined;
  const added = suppression
    ? suppressionDecider.decide(
        { type: 'AddSuppression', data: suppression, metadata: { organizationId, now, eventIds: [randomUUID()] } },
        suppressionDecider.initialState(),
      )
    : [];
  await store.append([event!, ...added] as StoredEvent[]);
  return event!;
}

describe('mail that comes back after the delivery', () => {
  it('a DSN’s hard bounce is told as a Bounce, like one in the conversation, and its suppression as a SubscriptionChange', async () => {
    const to = unique('dsn');
    const sent = await send(org, to, { Tag: 'welcome' });
    await callsOf(receiver, to, 'Delivery');
    const event = await comesBack(sent.body.MessageID, to, {
      kind: 'HardBounced',
      smtpResponse: 'smtp; 550 5.1.1 mailbox disabled',
      statusCode: 550,
      enhancedStatus: '5.1.1',
      summary: 'Bad destination mailbox address',
    });
    const [bounce] = await callsOf(receiver, to, 'Bounce');
    expect(bounce!.json).toMatchObject({
      RecordType: 'Bounce',
      ID: bounceIdOf(event.metadata.eventId),
      Type: 'HardBounce',
      TypeCode: 1,
      Email: to,
      MessageID: sent.body.MessageID,
      Tag: 'welcome',
      Details: 'smtp; 550 5.1.1 mailbox disabled',
      Inactive: true,
    });
    const [change] = await callsOf(receiver, to, 'SubscriptionChange');
    expect(change!.json).toMatchObject({ SuppressionReason: 'HardBounce', SuppressSending: true, Origin: 'Recipient' });
  });

  it('a spam complaint is told once as Postmark’s SpamComplaint, and its suppression as a SubscriptionChange', async () => {
    const to = unique('complained');
    const sent = await send(org, to, { Tag: 'news', Metadata: { list: 'weekly' } });
    await callsOf(receiver, to, 'Delivery');
    const event = await comesBack(sent.body.MessageID, to, {
      kind: 'SpamComplaint',
      feedbackType: 'abuse',
      summary: 'Reported as spam by the recipient',
    });
    const [complaint] = await callsOf(receiver, to, 'SpamComplaint');
    expect(complaint!.json).toEqual({
      RecordType: 'SpamComplaint',
      ID: bounceIdOf(event.metadata.eventId),
      Type: 'SpamComplaint',
      TypeCode: 100001,
      Name: 'Spam complaint',
      Tag: 'news',
      MessageID: sent.body.MessageID,
      Metadata: { list: 'weekly' },
      ServerID: numericId(org.organizationId),
      MessageStream: 'outbound',
      Description: 'The subscriber explicitly marked this message as spam.',
      Details: 'Reported as spam by the recipient',
      Email: to,
      From: `orders@${org.domain}`,
      BouncedAt: new Date(event.metadata.occurredAt).toISOString(),
      DumpAvailable: false,
      Inactive: true,
      CanActivate: true,
      Subject: 'Your receipt',
    });
    expect(signatureValid(complaint!, hook.secret)).toBe(true);
    const [change] = await callsOf(receiver, to, 'SubscriptionChange');
    expect(change!.json).toMatchObject({
      SuppressionReason: 'SpamComplaint',
      SuppressSending: true,
      Origin: 'Recipient',
    });
    // One call for the event: no Bounce, no second SpamComplaint.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(
      receiver
        .about(to)
        .map((c) => c.json.RecordType)
        .sort(),
    ).toEqual(['Delivery', 'SpamComplaint', 'SubscriptionChange']);
  });
});

describe('a manual suppression, then its deletion', () => {
  it('are told as two SubscriptionChanges: suppressed by the customer, then reactivated', async () => {
    const address = unique('manual');
    const suppressions = new ManualSuppressions({
      store,
      accounts: api.deps.accounts,
      suppressions: api.deps.suppressions,
    });
    await suppressions.add(org.organizationId, address, 'Customer');
    const [added] = await callsOf(receiver, address, 'SubscriptionChange');
    expect(added!.json).toMatchObject({
      SuppressSending: true,
      SuppressionReason: 'ManualSuppression',
      Origin: 'Customer',
    });

    const deleted = await call(api.baseUrl, 'POST', '/message-streams/outbound/suppressions/delete', {
      key: org.liveKey,
      body: { Suppressions: [{ EmailAddress: address }] },
    });
    expect(deleted.body.Suppressions[0].Status).toBe('Deleted');
    const changes = await callsOf(receiver, address, 'SubscriptionChange', 2);
    expect(changes[1]!.json).toMatchObject({ Recipient: address, SuppressSending: false, SuppressionReason: null });
    expect(changes[1]!.headers['webhook-id']).not.toBe(changes[0]!.headers['webhook-id']);
  });
});

describe('a receiver that answers 500 twice, then 200', () => {
  it('gets the event three times with the same Webhook-Id and a valid signature each time', async () => {
    const flaky = await newReceiver((received, all) => {
      const tries = all.filter((c) => c.headers['webhook-id'] === received.headers['webhook-id']).length;
      return tries <= 2 ? { status: 500, body: 'try later' } : 200;
    });
    const flakyHook = await addWebhook(org, flaky.url, { delivery: { enabled: true } });
    try {
      const to = unique('flaky');
      await send(org, to);
      const calls = await callsOf(flaky, to, 'Delivery', 3);
      expect(new Set(calls.map((c) => c.headers['webhook-id'])).size).toBe(1);
      expect(calls.every((c) => signatureValid(c, flakyHook.secret))).toBe(true);
      // The second call waited the first delay at least, the third the second one.
      expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[0]! - 50);
      expect(calls[2]!.at - calls[1]!.at).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[1]! - 50);
      const attempts = await eventually(async () => {
        const found = (await log.attempts(org.organizationId, flakyHook.id)).filter(
          (a) => a.callId === calls[0]!.headers['webhook-id'],
        );
        return found.length === 3 ? found : undefined;
      });
      expect(attempts.map((a) => [a.attempt, a.status, a.httpStatus])).toEqual([
        [3, 'Delivered', 200],
        [2, 'Retrying', 500],
        [1, 'Retrying', 500],
      ]);
      expect(attempts[1]!.answer).toBe('try later');
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(flaky.about(to)).toHaveLength(3);
    } finally {
      await deleteWebhook(org, flakyHook.id);
    }
  });
});

describe('a receiver that never answers', () => {
  it('is tried on the schedule, each call abandoned after the timeout, then given up and logged as failed', async () => {
    const dead = await newReceiver(() => 'hang');
    const deadHook = await addWebhook(org, dead.url, { delivery: { enabled: true } });
    try {
      const to = unique('dead');
      await send(org, to);
      const calls = await callsOf(dead, to, 'Delivery', 3);
      expect(new Set(calls.map((c) => c.headers['webhook-id'])).size).toBe(1);
      expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(TIMEOUT_MS + RETRY_DELAYS_MS[0]! - 100);
      expect(calls[2]!.at - calls[1]!.at).toBeGreaterThanOrEqual(TIMEOUT_MS + RETRY_DELAYS_MS[1]! - 100);
      const last = await eventually(async () => {
        const [newest] = (await log.attempts(org.organizationId, deadHook.id)).filter(
          (a) => a.callId === calls[0]!.headers['webhook-id'],
        );
        return newest?.status === 'Failed' ? newest : undefined;
      }, 10_000);
      expect(last).toMatchObject({ attempt: 3, status: 'Failed', recordType: 'Delivery' });
      expect(last.error).toMatch(/no answer within 1\.5 s/);
      expect(last.httpStatus).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(dead.about(to)).toHaveLength(3);
    } finally {
      await deleteWebhook(org, deadHook.id);
    }
  });

  it('does not delay another endpoint: its calls go out while the hanging one holds its own slots', async () => {
    const dead = await newReceiver(() => 'hang');
    const deadHook = await addWebhook(org, dead.url, { delivery: { enabled: true } });
    try {
      const recipients = Array.from({ length: 20 }, () => unique('busy'));
      await send(org, recipients.join(', '));
      const delivered = await Promise.all(recipients.map(async (to) => (await callsOf(receiver, to, 'Delivery'))[0]!));
      const firstDead = (await eventually(async () => dead.calls[0]))!;
      // Twenty calls to the live receiver, all made while the dead endpoint held no more than its own slots (each
      // for the 1.5 s timeout): had they waited behind it, it would have been called again meanwhile.
      expect(firstDead).toBeDefined();
      const deadBy = dead.calls.filter((c) => c.at <= Math.max(...delivered.map((d) => d.at)));
      expect(deadBy.length).toBeLessThanOrEqual(webhooksConfigFromEnv({}).perEndpointConcurrency);
      expect(deadBy.length).toBeLessThan(recipients.length);
    } finally {
      await deleteWebhook(org, deadHook.id);
    }
  });
});

describe('the delivery log and a redelivery, through the API', () => {
  it('lists the webhook’s last attempts and makes a call again with the same Webhook-Id, for its organization only', async () => {
    const to = unique('logged');
    await send(org, to);
    const [delivery] = await callsOf(receiver, to, 'Delivery');
    const deliveryId = String(delivery!.headers['webhook-id']);
    const listed = await eventually(async () => {
      const answer = await call(api.baseUrl, 'GET', `/webhooks/${hook.id}/deliveries?count=100`, { key: org.liveKey });
      const entry = answer.body.Deliveries?.find((d: { DeliveryID: string }) => d.DeliveryID === deliveryId);
      return entry ? { answer, entry } : undefined;
    });
    expect(listed.answer.status).toBe(200);
    expect(listed.entry).toMatchObject({
      DeliveryID: deliveryId,
      WebhookID: hook.id,
      RecordType: 'Delivery',
      Attempt: 1,
      Manual: false,
      Status: 'Delivered',
      HttpStatus: 200,
      Response: 'ok',
      Error: null,
      NextAttemptAt: null,
    });
    expect(listed.entry.LatencyMs).toBeGreaterThanOrEqual(0);

    const retried = await call(api.baseUrl, 'POST', `/webhooks/${hook.id}/deliveries/${deliveryId}/retry`, {
      key: org.liveKey,
    });
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual({ DeliveryID: deliveryId, Message: 'Redelivery scheduled.' });
    const again = await callsOf(receiver, to, 'Delivery', 2);
    expect(again[1]!.headers['webhook-id']).toBe(deliveryId);
    expect(again[1]!.body).toBe(again[0]!.body);
    expect(signatureValid(again[1]!, hook.secret)).toBe(true);

    // Another organization's key reaches neither the log nor the call; an unknown delivery is 404 too.
    const theirs = await call(api.baseUrl, 'GET', `/webhooks/${hook.id}/deliveries`, { key: other.liveKey });
    expect(theirs.status).toBe(404);
    expect(theirs.body.ErrorCode).toBe(1400);
    const theirRetry = await call(api.baseUrl, 'POST', `/webhooks/${hook.id}/deliveries/${deliveryId}/retry`, {
      key: other.liveKey,
    });
    expect(theirRetry.status).toBe(404);
    const unknown = await call(api.baseUrl, 'POST', `/webhooks/${hook.id}/deliveries/${randomUUID()}/retry`, {
      key: org.liveKey,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.ErrorCode).toBe(1407);
  });
});

describe('organizations apart', () => {
  it("another organization's webhook never receives our events, nor ours theirs", async () => {
    const theirs = unique('theirs');
    await send(other, theirs);
    const [delivery] = await callsOf(otherReceiver, theirs, 'Delivery');
    expect(delivery!.json.ServerID).toBe(numericId(other.organizationId));
    expect(receiver.about(theirs)).toEqual([]);
    const ours = new Set(receiver.calls.map((c: ReceivedCall) => c.json.Recipient ?? c.json.Email));
    expect(otherReceiver.calls.filter((c) => ours.has(c.json.Recipient ?? c.json.Email))).toEqual([]);
    expect(otherReceiver.calls.every((c) => c.json.ServerID === numericId(other.organizationId))).toBe(true);
  });
});

describe('calls to addresses that are not public', () => {
  const http = () =>
    new WebhookHttp({
      timeoutMs: 2000,
      maxAnswerBytes: 65536,
      connectionsPerOrigin: 2,
      addressAllowed: isPublicAddress,
    });

  it('are refused for a loopback address written in the URL, and nothing reaches the receiver', async () => {
    const target = await newReceiver();
    const client = http();
    const result = await client.call(target.url, { 'content-type': 'application/json' }, '{}');
    await client.close();
    expect(result).toMatchObject({ ok: false });
    expect(result.error).toMatch(/127\.0\.0\.1.*not a public address/);
    expect(target.calls).toEqual([]);
  });

  it('are refused when the host name resolves to loopback at call time (DNS rebinding)', async () => {
    const target = await newReceiver();
    const client = http();
    const result = await client.call(target.url.replace('127.0.0.1', 'localhost'), {}, '{}');
    await client.close();
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/localhost resolves to .*not a public address/);
    expect(target.calls).toEqual([]);
  });

  it('do not follow redirects and read at most 64 kB of an answer', async () => {
    const redirecting = await newReceiver(() => ({ status: 302, body: 'moved' }));
    const big = await newReceiver(() => ({ status: 200, body: 'x'.repeat(1_000_000) }));
    const client = new WebhookHttp({ timeoutMs: 2000, maxAnswerBytes: 65536, connectionsPerOrigin: 2 });
    const redirected = await client.call(redirecting.url, {}, '{}');
    expect(redirected).toMatchObject({ ok: false, status: 302 });
    const answered = await client.call(big.url, {}, '{}');
    expect(answered).toMatchObject({ ok: true, status: 200 });
    expect(answered.answer.length).toBeLessThanOrEqual(1000);
    await client.close();
  });
});
