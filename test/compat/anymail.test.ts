/**
 * django-anymail's Postmark backend and its tracking webhook view against the real services (docs/api.md, "Frameworks'
 * mail backends"): a Django server (test/compat/python/anymail_compat.py, one Python process for the whole file)
 * sends through anymail as a Django app does, with only POSTMARK_API_URL pointed at the API; the sender delivers to a
 * test mail server; the webhooks process calls anymail's PostmarkTrackingWebhookView with the webhook's HttpAuth, and
 * anymail's tracking signal tells what anymail made of each call.
 *
 * Not here yet: `template_id` sends and `merge_data` (anymail sends those to Postmark's template routes, issue 36), and
 * anymail's inbound view (issue 35).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { ManualSuppressions } from '@sendline/application';
import {
  decideMessage,
  suppressionDecider,
  suppressionForSpamComplaint,
  WEBHOOK_ID_MAX,
  type ReturnedOutcome,
} from '@sendline/domain';
import {
  encryptSecret,
  secretKeyFromEnv,
  type EventStore,
  type ReceivedMessage,
  type StoredEvent,
  type TestMailServer,
} from '@sendline/infra';
import type { Sender } from '@sendline/sender';
import { Webhooks, webhooksConfigFromEnv } from '@sendline/webhooks';
import PostalMime from 'postal-mime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailServer, startTestSender, testSenderConfig } from '../sender/support';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { call } from '../support/http';
import { deleteTopicsAndDisconnect, eventually, freshEventStore, uniqueName } from '../support/services';
import { deleteTopicsUnder } from '../webhooks/support';

interface Status {
  messageId: string | string[];
  status: string[];
  recipients: Record<string, { status: string; messageId: string | null }>;
}
interface Failure {
  errorType: string | null;
  isAnymailError?: boolean;
  status?: number | null;
  errorCode?: number | null;
  message?: string;
}
interface SendResults {
  django: string;
  anymail: string;
  plain: Status;
  multi: Status & { cid: string };
  batch: Status;
  bounces: Record<string, Status>;
  foreignFrom: Failure;
  wrongKey: Failure;
  invalid: Failure;
  inactive: Failure;
}
interface AnymailEvent {
  espName: string;
  recordType: string;
  type: string | null;
  eventType: string;
  recipient: string | null;
  messageId: string | null;
  timestamp: string | null;
  sentTime: string | null;
  tags: string[];
  metadata: Record<string, string>;
  rejectReason: string | null;
  eventId: string | null;
  mtaResponse: string | null;
}

const UUID = /^[0-9a-f-]{36}$/;
const secretKey = secretKeyFromEnv();
const id = randomUUID().slice(0, 8);
const at = (local: string) => `${local}-${id}@dest.example.net`;
const addresses = {
  to: at('ann'),
  cc: at('carl'),
  bcc: at('bea'),
  replyTo: [at('desk'), at('billing')],
  multiTo: at('mia'),
  batch: [at('batch1'), at('batch2')],
  hardBounce: at('hardbounce'),
  blocked: at('policy'),
  softBounce: at('mailboxfull'),
  gone: at('gone'),
};
const tag = `anymail-${id}`;
const auth = { username: 'anymail', password: randomBytes(12).toString('hex') };

let store: EventStore;
let api: TestApi;
let org: TestOrganization;
let mail: TestMailServer;
let sender: Sender;
let webhooks: Webhooks;
let django: ChildProcess;
let djangoUrl: string;
let sent: SendResults;

/** Starts the Django server and resolves with its address (its first line of output). */
async function startDjango(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn('bash', ['infra/local/bin/compat', 'run', 'anymail'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the anymail server exited (${code}) before listening`)));
    lines.on('line', (line) => {
      if (line.startsWith('{"url"')) resolve((JSON.parse(line) as { url: string }).url);
    });
  });
  return { child, url };
}

async function anymailEvents(): Promise<AnymailEvent[]> {
  const answer = await fetch(`${djangoUrl}/events`);
  return ((await answer.json()) as { events: AnymailEvent[] }).events;
}

/** The events anymail parsed about a recipient, once there are `count` of the given RecordType (and Type). */
const eventsFor = (recipient: string, recordType: string, type?: string, count = 1) =>
  eventually(
    async () => {
      const found = (await anymailEvents()).filter(
        (event) =>
          event.recipient === recipient &&
          event.recordType === recordType &&
          (type === undefined || event.type === type),
      );
      return found.length >= count ? found : undefined;
    },
    30_000,
    `anymail's ${recordType} ${type ?? ''} event for ${recipient}`,
  ).then((found) => {
    // Every event's timestamp is the webhook's own time field, read by anymail to the millisecond.
    for (const event of found) expect(new Date(event.timestamp!).toISOString()).toBe(event.sentTime);
    return found;
  });

function deliveredTo(recipient: string): Promise<ReceivedMessage> {
  return eventually(
    async () => mail.messages().find((message) => message.recipients.includes(recipient)),
    30_000,
    `the message delivered to ${recipient}`,
  );
}

/** Mail coming back about a delivered recipient, as the returns reader records it (test/webhooks/dispatch.test.ts). */
async function comesBack(messageId: string, recipient: string, outcome: ReturnedOutcome): Promise<StoredEvent> {
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
  const added =
    event!.type === 'MessageSpamComplaint'
      ? suppressionDecider.decide(
          {
            type: 'AddSuppression',
            data: suppressionForSpamComplaint(event!),
            metadata: { organizationId, now, eventIds: [randomUUID()] },
          },
          suppressionDecider.initialState(),
        )
      : [];
  await store.append([event!, ...added] as StoredEvent[]);
  return event! as StoredEvent;
}

beforeAll(async () => {
  store = await freshEventStore('test-anymail');
  api = await startTestApi({ store });
  org = await createTestOrganization(api.deps, { domain: `anymail-${id}.example.com` });
  mail = await startMailServer(api.deps.accounts, [org]);
  const origin = api.baseUrl.replace(/\/v1$/, '');
  // The sender, the Django server and the webhooks process start side by side: each waits for its own consumers.
  [sender, { child: django, url: djangoUrl }, webhooks] = await Promise.all([
    startTestSender(api.deps, [org.organizationId], testSenderConfig({ host: mail.host, port: mail.port }), secretKey),
    startDjango({
      COMPAT_KEY: org.liveKey,
      COMPAT_ROOT_URL: `${origin}/`,
      COMPAT_WEBHOOK_AUTH: `${auth.username}:${auth.password}`,
    }),
    Webhooks.start({
      store,
      redis: api.deps.redis,
      directory: api.deps.accounts,
      secretKey,
      config: {
        ...webhooksConfigFromEnv({}),
        dispatcherGroupId: uniqueName('test-anymail-dispatcher'),
        callerGroupId: uniqueName('test-anymail-calls'),
        startNewGroupsAt: 'latest',
        retryDelaysMs: [300, 600],
        allowPrivateAddresses: true,
        sessionTimeoutMs: 10_000,
      },
      accept: (organizationId) => organizationId === org.organizationId,
      directoryCacheMs: 0,
      log: () => undefined,
    }),
  ]);
  // The webhook as a customer sets it: anymail's tracking URL, HTTP Basic credentials in HttpAuth, every trigger.
  await org.run({
    type: 'CreateWebhook',
    data: {
      webhookId: randomInt(1, WEBHOOK_ID_MAX),
      url: `${djangoUrl}/anymail/postmark/tracking/`,
      httpAuth: { username: auth.username, passwordSealed: encryptSecret(auth.password, secretKey) },
      triggers: {
        delivery: { enabled: true },
        bounce: { enabled: true },
        subscriptionChange: { enabled: true },
        spamComplaint: { enabled: true },
      },
      signingSecretSealed: encryptSecret(`whsec_${randomBytes(32).toString('base64')}`, secretKey),
      allowHttp: true,
    },
  });
  // An address suppressed by hand (a SubscriptionChange too), for the refused send.
  await new ManualSuppressions({ store, accounts: api.deps.accounts, suppressions: api.deps.suppressions }).add(
    org.organizationId,
    addresses.gone,
    'Customer',
  );

  const answer = await fetch(`${djangoUrl}/send`, {
    method: 'POST',
    body: JSON.stringify({
      from: `billing@${org.domain}`,
      to: addresses.to,
      cc: addresses.cc,
      bcc: addresses.bcc,
      replyTo: addresses.replyTo,
      multiTo: addresses.multiTo,
      batch: addresses.batch,
      bounces: [addresses.hardBounce, addresses.blocked, addresses.softBounce],
      foreignFrom: `someone@not-ours-${id}.example.org`,
      gone: addresses.gone,
      tag,
    }),
  });
  expect(answer.status).toBe(200);
  sent = (await answer.json()) as SendResults;
}, 300_000);

afterAll(async () => {
  django?.kill('SIGTERM');
  await webhooks?.stop();
  await sender?.stop();
  await mail?.stop();
  await api?.close();
  if (store) {
    await deleteTopicsUnder(store, store.topics.webhookCalls);
    await deleteTopicsAndDisconnect(store);
  }
});

describe("anymail's Postmark backend", () => {
  it('is the pinned Django and anymail', () => {
    expect({ django: sent.django, anymail: sent.anymail }).toEqual({ django: '5.2.19', anymail: '15.2' });
  });

  it('sends an EmailMessage with an attachment, cc, bcc, reply-to and headers; anymail_status has our MessageID', async () => {
    const messageId = sent.plain.messageId as string;
    expect(messageId).toMatch(UUID);
    expect(sent.plain.status).toEqual(['sent']);
    for (const address of [addresses.to, addresses.cc, addresses.bcc]) {
      expect(sent.plain.recipients[address]).toEqual({ status: 'sent', messageId });
    }
    // One copy per recipient, the same message in each: the Bcc recipient is in none of their headers.
    const copies = await Promise.all([addresses.to, addresses.cc, addresses.bcc].map(deliveredTo));
    expect(new Set(copies.map((copy) => copy.messageId)).size).toBe(1);
    for (const copy of copies) expect(copy.raw!.toString('utf8')).not.toContain(addresses.bcc);
    const parsed = await PostalMime.parse(copies[0]!.raw!);
    expect(parsed.subject).toBe('Invoice 42');
    expect(parsed.from).toMatchObject({ name: 'Billing', address: `billing@${org.domain}` });
    expect(parsed.cc?.map((mailbox) => mailbox.address)).toEqual([addresses.cc]);
    expect(parsed.bcc ?? []).toEqual([]);
    expect(parsed.replyTo?.map((mailbox) => mailbox.address)).toEqual(addresses.replyTo);
    const header = (name: string) => parsed.headers.find((h) => h.key === name)?.value;
    expect(header('x-invoice-number')).toBe('42');
    expect(header('x-lower-case')).toBe('kept');
    expect(parsed.text?.trim()).toBe('Your invoice is attached.');
    const [pdf] = parsed.attachments;
    expect(pdf).toMatchObject({ filename: 'invoice.pdf', mimeType: 'application/pdf' });
    const expected = Buffer.concat([
      Buffer.from('%PDF-1.4\n'),
      Buffer.from(Array.from({ length: 1024 }, (_, i) => i % 256)),
      Buffer.from('\n%%EOF\n'),
    ]);
    expect(Buffer.from(pdf!.content as ArrayBuffer).equals(expected)).toBe(true);
  });

  it('sends an EmailMultiAlternatives with HTML, an inline image by its Content-ID and a text attachment', async () => {
    expect(sent.multi.messageId).toMatch(UUID);
    const parsed = await PostalMime.parse((await deliveredTo(addresses.multiTo)).raw!);
    expect(parsed.subject).toBe('Your receipt — merci');
    expect(parsed.text?.trim()).toBe('Receipt in text');
    expect(parsed.html).toContain(`src="cid:${sent.multi.cid}"`);
    const logo = parsed.attachments.find((attachment) => attachment.filename === 'logo.png');
    expect(logo).toMatchObject({ mimeType: 'image/png', disposition: 'inline', contentId: `<${sent.multi.cid}>` });
    const notes = parsed.attachments.find((attachment) => attachment.filename === 'notes.txt');
    expect(new TextDecoder().decode(notes!.content as ArrayBuffer)).toBe('Grüße aus Köln\n');
  });

  it('sends merge_metadata as one /email/batch, each recipient with its own MessageID', async () => {
    const [first, second] = addresses.batch.map((address) => sent.batch.recipients[address]!);
    expect(first).toEqual({ status: 'sent', messageId: expect.stringMatching(UUID) });
    expect(second).toEqual({ status: 'sent', messageId: expect.stringMatching(UUID) });
    expect(first!.messageId).not.toBe(second!.messageId);
    expect(sent.batch.messageId).toEqual([first!.messageId, second!.messageId].sort());
    // Each message carries its own merged metadata, as its Delivery webhook shows.
    const [delivery] = await eventsFor(addresses.batch[1]!, 'Delivery');
    expect(delivery!.metadata).toEqual({ campaign: 'december', position: '2' });
  });

  it("raises anymail's own errors with the service's ErrorCode", () => {
    expect(sent.foreignFrom).toMatchObject({
      errorType: 'AnymailRequestsAPIError',
      isAnymailError: true,
      status: 422,
      errorCode: 400,
    });
    expect(sent.wrongKey).toMatchObject({ errorType: 'AnymailRequestsAPIError', status: 401, errorCode: 10 });
    expect(sent.invalid).toMatchObject({
      errorType: 'AnymailRequestsAPIError',
      status: 422,
      errorCode: 300,
      message: expect.stringContaining('Metadata may have at most 10 fields'),
    });
    // A 406 is a recipient status for anymail ("rejected", read out of Postmark's text); all rejected is its error.
    expect(sent.inactive).toMatchObject({
      errorType: 'AnymailRecipientsRefused',
      isAnymailError: true,
      errorCode: 406,
    });
  });
});

describe("our webhooks read by anymail's PostmarkTrackingWebhookView", () => {
  it('a Delivery is "delivered", with the recipient, our MessageID, the time, the tag and the metadata as strings', async () => {
    const messageId = sent.plain.messageId as string;
    for (const recipient of [addresses.to, addresses.cc, addresses.bcc]) {
      const [event] = await eventsFor(recipient, 'Delivery');
      expect(event).toMatchObject({
        espName: 'Postmark',
        eventType: 'delivered',
        messageId,
        tags: [tag],
        metadata: { order: '42', customer: 'c-7' },
        rejectReason: null,
        mtaResponse: expect.stringMatching(/^250 /),
      });
      expect(new Date(event!.timestamp!).getTime()).toBeGreaterThan(Date.now() - 120_000);
    }
  });

  it.each([
    ['HardBounce', 'bounced', 'bounced', 'hardBounce'],
    ['Blocked', 'rejected', 'blocked', 'blocked'],
    ['SoftBounce', 'bounced', 'bounced', 'softBounce'],
  ] as const)(
    'a %s in the SMTP conversation is "%s", reject_reason "%s"',
    async (type, eventType, rejectReason, which) => {
      const recipient = addresses[which];
      const [event] = await eventsFor(recipient, 'Bounce', type);
      expect(event).toMatchObject({
        eventType,
        rejectReason,
        messageId: sent.bounces[recipient]!.messageId,
        tags: [tag],
        metadata: { case: 'bounce' },
        eventId: expect.stringMatching(/^\d+$/),
        mtaResponse: expect.stringMatching(/^5\d\d /),
      });
      expect(event!.timestamp).not.toBeNull();
    },
  );

  it('mail that comes back: a delay is "deferred", an automatic reply "autoresponded", a complaint "complained"/"spam"', async () => {
    const messageId = sent.plain.messageId as string;
    await eventsFor(addresses.bcc, 'Delivery');
    await comesBack(messageId, addresses.cc, {
      kind: 'DelayReported',
      smtpResponse: 'smtp; 451 4.4.1 no answer from host',
      enhancedStatus: '4.4.1',
      summary: 'Delivery delayed',
    });
    await comesBack(messageId, addresses.bcc, { kind: 'AutoReplied', summary: 'Out of office' });
    await comesBack(messageId, addresses.to, {
      kind: 'SpamComplaint',
      feedbackType: 'abuse',
      summary: 'Reported as spam by the recipient',
    });
    const [delay] = await eventsFor(addresses.cc, 'Bounce', 'Transient');
    expect(delay).toMatchObject({ eventType: 'deferred', rejectReason: null, messageId, tags: [tag] });
    const [autoReply] = await eventsFor(addresses.bcc, 'Bounce', 'AutoResponder');
    expect(autoReply).toMatchObject({ eventType: 'autoresponded', rejectReason: null, messageId });
    const [complaint] = await eventsFor(addresses.to, 'SpamComplaint');
    expect(complaint).toMatchObject({
      eventType: 'complained',
      rejectReason: 'spam',
      messageId,
      tags: [tag],
      metadata: { order: '42', customer: 'c-7' },
    });
  });

  it('a SubscriptionChange is read by its reason: bounced, complained, unsubscribed, and "subscribed" once deleted', async () => {
    const [hard] = await eventsFor(addresses.hardBounce, 'SubscriptionChange');
    expect(hard).toMatchObject({ eventType: 'bounced', rejectReason: 'bounced', messageId: null });
    const [spam] = await eventsFor(addresses.to, 'SubscriptionChange');
    expect(spam).toMatchObject({ eventType: 'complained', rejectReason: 'spam' });
    const [manual] = await eventsFor(addresses.gone, 'SubscriptionChange');
    expect(manual).toMatchObject({ eventType: 'unsubscribed', rejectReason: 'unsubscribed' });
    expect(manual!.timestamp).not.toBeNull();

    const deleted = await call(api.baseUrl, 'POST', '/message-streams/outbound/suppressions/delete', {
      key: org.liveKey,
      body: { Suppressions: [{ EmailAddress: addresses.gone }] },
    });
    expect(deleted.body.Suppressions[0].Status).toBe('Deleted');
    const changes = await eventsFor(addresses.gone, 'SubscriptionChange', undefined, 2);
    expect(changes[1]).toMatchObject({ eventType: 'subscribed', rejectReason: null });
  });
});
