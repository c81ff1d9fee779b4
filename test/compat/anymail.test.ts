/**
 * django-anymail's Postmark backend and its tracking webhook view against the real services (docs/api.md, "Frameworks'
 * mail backends"): a Django server (test/compat/python/anymail_compat.py, one Python process for the whole file)
 * sends through anymail as a Django app does, with only POSTMARK_API_URL pointed at the API; the sender delivers to a
 * test mail server; the webhooks process calls anymail's PostmarkTrackingWebhookView with the webhook's HttpAuth, and
 * anymail's tracking signal tells what anymail made of each call.
 *
 * Templates: a template made through the API, sent by anymail's `template_id` (`/email/withTemplate`) and with
 * `merge_data` (`/email/batchWithTemplates`). Inbound: mail sent over SMTP to the organization's inbound address goes
 * through our MX and the inbound reader, and the webhooks process posts its JSON to the InboundHookUrl, anymail's
 * PostmarkInboundWebhookView (HTTP Basic credentials in the URL, as anymail's docs tell Postmark users to write it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import nodemailer from 'nodemailer';
import { InboundSettings, ManualSuppressions } from '@sendline/application';
import { InboundReader } from '@sendline/inbound';
import {
  decideMessage,
  suppressionDecider,
  suppressionForSpamComplaint,
  WEBHOOK_ID_MAX,
  type ReturnedOutcome,
} from '@sendline/domain';
import {
  DEFAULT_INBOUND_DOMAIN,
  encryptSecret,
  MemoryZone,
  secretKeyFromEnv,
  startDnsServer,
  type EventStore,
  type RunningDnsServer,
  type ReceivedMessage,
  type StoredEvent,
  type TestMailServer,
} from '@sendline/infra';
import type { MxServer } from '@sendline/mx';
import type { Sender } from '@sendline/sender';
import { Webhooks, webhooksConfigFromEnv } from '@sendline/webhooks';
import PostalMime from 'postal-mime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestMx } from '../mx/support';
import { startMailServer, startTestSender, testSenderConfig } from '../sender/support';
import {
  createTestOrganization,
  noHostResolver,
  startTestApi,
  type TestApi,
  type TestOrganization,
} from '../support/api';
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
  templated: Status;
  merged: Status;
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

interface AnymailInbound {
  espName: string;
  eventType: string;
  eventId: string | null;
  from: string | null;
  fromAddress: string | null;
  to: string[];
  envelopeRecipient: string | null;
  envelopeSender: string | null;
  subject: string | null;
  text: string | null;
  html: string | null;
  strippedText: string | null;
  rawEmail: boolean;
  attachments: AnymailPart[];
  inlines: AnymailPart[];
}
interface AnymailPart {
  name: string | null;
  contentType: string;
  content: string;
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
  templateTo: at('tina'),
  templateBatch: [at('tb1'), at('tb2')],
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
let mx: MxServer;
let dns: RunningDnsServer;
let inbound: Awaited<ReturnType<typeof InboundReader.start>>;
let template: { TemplateId: number; Alias: string };

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
  api = await startTestApi((deps) => ({
    store,
    // Development mode for the inbound hook only: the Django server is plain http on loopback.
    inbound: new InboundSettings({
      store,
      view: deps.accounts,
      secretKey: () => secretKey,
      inboundDomain: DEFAULT_INBOUND_DOMAIN,
      development: true,
      resolveHost: noHostResolver,
    }),
  }));
  org = await createTestOrganization(api.deps, { domain: `anymail-${id}.example.com` });
  mail = await startMailServer(api.deps.accounts, [org]);
  const origin = api.baseUrl.replace(/\/v1$/, '');
  // An empty zone: the inbound reader's SPF/DKIM lookups are answered at once (none published).
  dns = await startDnsServer({ zone: new MemoryZone([]) });
  // The sender, the Django server, the webhooks process, the MX and the inbound reader start side by side: each
  // waits for its own consumers.
  [sender, { child: django, url: djangoUrl }, webhooks, mx, inbound] = await Promise.all([
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
    startTestMx({ store, accounts: api.deps.accounts, secretKey, inbound: true }),
    InboundReader.start({
      store,
      directory: api.deps.accounts,
      inboundDomain: DEFAULT_INBOUND_DOMAIN,
      mta: 'mx.sendline.test',
      dns: { servers: [dns.address], timeoutMs: 1000 },
      groupId: uniqueName('test-anymail-inbound'),
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

  // A template made through the API, as a customer makes it before sending with it from Django.
  const created = await call(api.baseUrl, 'POST', '/templates', {
    key: org.liveKey,
    body: {
      Name: 'Order receipt',
      Alias: `receipt-${id}`,
      Subject: 'Order {{order.number}} for {{name}}',
      HtmlBody: '<p>Hello {{name}}, your order {{order.number}} is on its way.</p>',
      TextBody: 'Hello {{name}}, your order {{order.number}} is on its way.',
    },
  });
  expect(created.status).toBe(200);
  template = created.body as { TemplateId: number; Alias: string };

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
      templateTo: addresses.templateTo,
      templateBatch: addresses.templateBatch,
      templateId: template.TemplateId,
      templateAlias: template.Alias,
      tag,
    }),
  });
  expect(answer.status).toBe(200);
  sent = (await answer.json()) as SendResults;
}, 300_000);

afterAll(async () => {
  django?.kill('SIGTERM');
  await inbound?.consumer.stop();
  await mx?.stop();
  await dns?.close();
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

  it('sends template_id with merge_global_data through /email/withTemplate: the template rendered, our MessageID', async () => {
    const messageId = sent.templated.messageId as string;
    expect(messageId).toMatch(UUID);
    expect(sent.templated.recipients[addresses.templateTo]).toEqual({ status: 'sent', messageId });
    const parsed = await PostalMime.parse((await deliveredTo(addresses.templateTo)).raw!);
    expect(parsed.subject).toBe('Order 42 for Ann');
    expect(parsed.text?.trim()).toBe('Hello Ann, your order 42 is on its way.');
    expect(parsed.html).toContain('<p>Hello Ann, your order 42 is on its way.</p>');
  });

  it('sends merge_data with a template alias as one /email/batchWithTemplates, each recipient rendered with its own data', async () => {
    const [first, second] = addresses.templateBatch.map((address) => sent.merged.recipients[address]!);
    expect(first).toEqual({ status: 'sent', messageId: expect.stringMatching(UUID) });
    expect(second).toEqual({ status: 'sent', messageId: expect.stringMatching(UUID) });
    expect(first!.messageId).not.toBe(second!.messageId);
    expect(sent.merged.messageId).toEqual([first!.messageId, second!.messageId].sort());
    for (const [index, address] of addresses.templateBatch.entries()) {
      const parsed = await PostalMime.parse((await deliveredTo(address)).raw!);
      expect(parsed.subject).toBe(`Order 7 for Reader ${index + 1}`);
      expect(parsed.text?.trim()).toBe(`Hello Reader ${index + 1}, your order 7 is on its way.`);
    }
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

/** Sends mail over SMTP to our MX (as a remote server would) and waits for anymail's inbound message with its subject. */
async function receivedByAnymail(to: string, subject: string, attachment: Buffer): Promise<AnymailInbound> {
  const [host, port] = mx.address.split(':');
  const transport = nodemailer.createTransport({ host, port: Number(port), secure: false, ignoreTLS: true });
  try {
    await transport.sendMail({
      from: 'Ann Customer <ann@customer.example>',
      to,
      subject,
      text: 'Yes, please ship it.',
      html: '<p>Yes, please <b>ship</b> it.</p>',
      attachments: [{ filename: 'photo.bin', content: attachment, contentType: 'application/octet-stream' }],
    });
  } finally {
    transport.close();
  }
  return eventually(
    async () => {
      const answer = await fetch(`${djangoUrl}/inbound`);
      const { messages } = (await answer.json()) as { messages: AnymailInbound[] };
      return messages.find((m) => m.subject === subject);
    },
    60_000,
    `anymail's inbound message '${subject}'`,
  );
}

describe("our inbound JSON read by anymail's PostmarkInboundWebhookView", () => {
  const attachment = Buffer.from(Array.from({ length: 600 }, (_, i) => (i * 7) % 256));
  const photo = { name: 'photo.bin', contentType: 'application/octet-stream', content: attachment.toString('base64') };
  let recipient: string;

  beforeAll(async () => {
    // The hook URL as anymail's docs tell Postmark users to write it: the WEBHOOK_SECRET's credentials in it.
    const server = await call(api.baseUrl, 'PUT', '/server', {
      key: org.liveKey,
      body: {
        InboundHookUrl:
          djangoUrl.replace('://', `://${auth.username}:${auth.password}@`) + '/anymail/postmark/inbound/',
        RawEmailEnabled: false,
      },
    });
    expect(server.status).toBe(200);
    recipient = (server.body.InboundAddress as string).replace('@', '+ticket-7@');
  });

  it('mail to the inbound address is an AnymailInboundMessage: from, subject, text, HTML, the attachment, envelope recipient', async () => {
    const subject = `Re: your order ${id}`;
    const message = await receivedByAnymail(recipient, subject, attachment);
    expect(message).toMatchObject({
      espName: 'Postmark',
      eventType: 'inbound',
      eventId: expect.stringMatching(UUID),
      rawEmail: false,
      from: 'Ann Customer <ann@customer.example>',
      fromAddress: 'ann@customer.example',
      to: [recipient],
      envelopeRecipient: recipient,
      subject,
      strippedText: 'Yes, please ship it.',
    });
    expect(message.text?.trim()).toBe('Yes, please ship it.');
    expect(message.html).toContain('<p>Yes, please <b>ship</b> it.</p>');
    // Postmark's documented JSON gives an attachment without a Content-ID "ContentID": "", as ours does; anymail makes
    // every attachment with that key an inline part when it builds the message from the JSON.
    expect(message.attachments).toEqual([]);
    expect(message.inlines).toEqual([photo]);
    // anymail reads the envelope sender from a first header named Return-Path, as Postmark's payloads and ours begin.
    expect(message.envelopeSender).toBe('ann@customer.example');
  });

  it('with RawEmailEnabled anymail reads the message itself: the attachment is among its attachments', async () => {
    const changed = await call(api.baseUrl, 'PUT', '/server', { key: org.liveKey, body: { RawEmailEnabled: true } });
    expect(changed.body.RawEmailEnabled).toBe(true);
    const subject = `Re: your order ${id}, raw`;
    const message = await receivedByAnymail(recipient, subject, attachment);
    expect(message).toMatchObject({
      rawEmail: true,
      fromAddress: 'ann@customer.example',
      to: [recipient],
      envelopeRecipient: recipient,
      subject,
    });
    expect(message.text?.trim()).toBe('Yes, please ship it.');
    expect(message.html).toContain('<p>Yes, please <b>ship</b> it.</p>');
    expect(message.attachments).toEqual([photo]);
    expect(message.inlines).toEqual([]);
  });
});
