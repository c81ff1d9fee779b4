/**
 * Mail that comes back, end to end on the real services (Kafka, the registry, Redis, ClickHouse), every app in this
 * process on this file's own topics and groups: the API, the sender, a test mail server standing for the
 * recipients' servers (its `bouncelater…` and `spamcomplaint…` modes send a DSN or an ARF report a moment after their
 * 250, from `<>` to the envelope sender), our MX, the returns reader, the projector and the webhooks.
 *
 *   POST /email → Sent → Delivered (250) → the DSN comes to b.<token>@… through our MX → mail.received → HardBounced
 *   → the recipient suppressed → the next send refused (406) → the Bounce webhook called → /bounces lists it.
 *
 * And what must change nothing: a forged token, another organization's suppressions, broken reports (which go to
 * mail.received's dead letters with their reason, while the reader goes on).
 */
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { Consumer } from 'kafkajs';
import { WEBHOOK_ID_MAX, type WebhookTriggersChange } from '@sendline/domain';
import {
  ActivityQueries,
  createClickHouse,
  deadLetterTopicOf,
  encryptSecret,
  migrate,
  readReturnedMail,
  ReturnedMessages,
  returnPathAddress,
  returnPathKey,
  secretKeyFromEnv,
  type ClickHouseClient,
  type EventStore,
  type TestMailServer,
} from '@sendline/infra';
import type { MxServer } from '@sendline/mx';
import { startProjector, type RunningProjector } from '@sendline/projector';
import { readReportOf, ReturnsReader } from '@sendline/returns';
import { senderConfigFromEnv, type Sender } from '@sendline/sender';
import { Webhooks, webhooksConfigFromEnv } from '@sendline/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestMx } from '../mx/support';
import { startMailServer, startTestSender, testSenderConfig } from '../sender/support';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { call } from '../support/http';
import { addresses, deleteTopicsAndDisconnect, eventually, freshEventStore, uniqueName } from '../support/services';
import { dsnAbout } from '../support/receiving';
import { deleteTopicsUnder, Receiver } from '../webhooks/support';

const secretKey = secretKeyFromEnv();
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
let clickhouse: ClickHouseClient;
let projector: RunningProjector;
let mx: MxServer;
let mail: TestMailServer;
let sender: Sender;
let returns: Awaited<ReturnType<typeof ReturnsReader.start>>;
let webhooks: Webhooks;
let receiver: Receiver;
let deadLetterConsumer: Consumer;
/** What mail.received's dead-letter topic holds: the error code and message of each mail no one could match. */
const deadLetters: { code: string; error: string }[] = [];

const unique = (local: string) => `${local}-${randomUUID().slice(0, 8)}@dest.example.net`;
const send = (from: TestOrganization, to: string) =>
  call(api.baseUrl, 'POST', '/email', {
    key: from.liveKey,
    body: { From: `orders@${from.domain}`, To: to, Subject: 'Your receipt', TextBody: 'Thanks.' },
  });
const get = (as: TestOrganization, path: string) => call(api.baseUrl, 'GET', path, { key: as.liveKey });
const detailsOf = (as: TestOrganization, messageId: string) => get(as, `/messages/outbound/${messageId}/details`);

const callsOf = (key: string, recordType: string) =>
  eventually(
    async () => {
      const found = receiver.about(key).filter((c) => c.json.RecordType === recordType);
      return found.length > 0 ? found : undefined;
    },
    60_000,
    `a ${recordType} call about ${key}`,
  );

/** Waits until the message's recipient shows `type` among its events (the activity store, through the API). */
/**
 * The message's details once they hold an event of `type` (and, given, the status it leads to: the activity store
 * writes a batch's events, then its messages' state, so under load the status may come a moment after its event).
 */
const eventInDetails = (as: TestOrganization, messageId: string, type: string, status?: string) =>
  eventually(
    async () => {
      const details = await detailsOf(as, messageId);
      const events = (details.body?.MessageEvents ?? []) as { Type: string; Details: Record<string, string> }[];
      const shown = events.some((event) => event.Type === type) && (!status || details.body.Status === status);
      return shown ? details.body : undefined;
    },
    60_000,
    `${type} in the details of ${messageId}`,
  );

/** Sends raw mail to our MX as a remote server would: from `<>` (a report), to `to`. */
async function sendToMx(to: string, raw: Buffer): Promise<string> {
  const [host, port] = mx.address.split(':');
  const transport = nodemailer.createTransport({ host, port: Number(port), secure: false, ignoreTLS: true });
  try {
    const info = await transport.sendMail({ envelope: { from: '', to: [to] }, raw });
    return info.response;
  } finally {
    transport.close();
  }
}

/** The envelope sender the sender gives recipient `index` of a message on the service's return-path domain. */
const tokenAddress = (messageId: string, recipientIndex = 0) =>
  returnPathAddress(returnPathKey(secretKey), { messageId, recipientIndex }, senderConfigFromEnv({}).returnPathDomain);

async function delivered(from: TestOrganization, to: string): Promise<string> {
  const sent = await send(from, to);
  expect(sent.status).toBe(200);
  await eventInDetails(from, sent.body.MessageID, 'Delivered');
  return sent.body.MessageID as string;
}

beforeAll(async () => {
  store = await freshEventStore('test-returns');
  api = await startTestApi({ store });
  org = await createTestOrganization(api.deps);
  other = await createTestOrganization(api.deps);
  const mine = new Set([org.organizationId, other.organizationId]);
  clickhouse = createClickHouse(addresses.clickhouseUrl);
  await migrate(clickhouse, addresses.clickhouseDatabase);
  projector = await startProjector({
    store,
    redis: api.deps.redis,
    clickhouse,
    database: addresses.clickhouseDatabase,
    groupPrefix: uniqueName('test-returns'),
    projections: ['activity', 'suppressions'],
    retention: false,
    writer: { maxDelayMs: 100 },
  });
  mx = await startTestMx({ store, accounts: api.deps.accounts, secretKey });
  mail = await startMailServer(api.deps.accounts, [org, other], { reports: { mx: mx.address, delayMs: 200 } });
  sender = await startTestSender(
    api.deps,
    [...mine],
    testSenderConfig({ host: mail.host, port: mail.port }),
    secretKey,
  );
  returns = await ReturnsReader.start({
    store,
    messages: new ReturnedMessages(
      new ActivityQueries(clickhouse, addresses.clickhouseDatabase, { timeoutMs: 10_000 }),
    ),
    suppressions: api.deps.suppressions,
    secretKey,
    readReport: async (raw) => readReportOf(await readReturnedMail(raw)),
    groupId: uniqueName('test-returns-reader'),
    maxAttempts: 3,
  });
  deadLetterConsumer = store.kafka.consumer({ groupId: uniqueName('test-returns-dead-letters') });
  await deadLetterConsumer.connect();
  await deadLetterConsumer.subscribe({ topics: [deadLetterTopicOf(store.topics.received)], fromBeginning: true });
  await deadLetterConsumer.run({
    eachMessage: async ({ message }) => {
      deadLetters.push({
        code: String(message.headers?.['dead-letter-error-code'] ?? ''),
        error: String(message.headers?.['dead-letter-error'] ?? ''),
      });
    },
  });
  receiver = await Receiver.start();
  const signingSecret = `whsec_${randomBytes(32).toString('base64')}`;
  await org.run({
    type: 'CreateWebhook',
    data: {
      webhookId: randomInt(1, WEBHOOK_ID_MAX),
      url: receiver.url,
      triggers: ALL_TRIGGERS,
      signingSecretSealed: encryptSecret(signingSecret, secretKey),
      allowHttp: true,
    },
  });
  webhooks = await Webhooks.start({
    store,
    redis: api.deps.redis,
    directory: api.deps.accounts,
    secretKey,
    config: {
      ...webhooksConfigFromEnv({}),
      dispatcherGroupId: uniqueName('test-returns-dispatcher'),
      callerGroupId: uniqueName('test-returns-calls'),
      startNewGroupsAt: 'latest',
      retryDelaysMs: [300, 600],
      timeoutMs: 1500,
      allowPrivateAddresses: true,
      sessionTimeoutMs: 10_000,
    },
    accept: (organizationId) => mine.has(organizationId),
    directoryCacheMs: 0,
    log: () => undefined,
  });
}, 120_000);

afterAll(async () => {
  await deadLetterConsumer?.disconnect();
  await webhooks?.stop();
  await returns?.consumer.stop();
  await sender?.stop();
  await mail?.stop();
  await mx?.stop();
  await projector?.stop();
  await receiver?.close();
  await clickhouse?.close();
  await api?.close();
  if (store) {
    await deleteTopicsUnder(store, store.topics.webhookCalls);
    await deleteTopicsAndDisconnect(store);
  }
});

describe('a recipient whose server takes the message and bounces it later', () => {
  const to = unique('bouncelater');
  let messageId: string;

  beforeAll(async () => {
    const sent = await send(org, to);
    expect(sent.status).toBe(200);
    messageId = sent.body.MessageID;
  }, 60_000);

  it('is Delivered, then Bounced by the DSN that came back to its return path', async () => {
    const details = await eventInDetails(org, messageId, 'Bounced', 'Bounced');
    const events = details.MessageEvents as { Type: string; Details: Record<string, string> }[];
    expect(events.map((event) => event.Type)).toEqual(['Accepted', 'Sent', 'Delivered', 'Bounced']);
    expect(events[2]!.Details.ReturnPath).toMatch(/^b\.[a-z2-7]{44}@/);
    expect(events[3]!.Details).toMatchObject({
      BounceType: 'HardBounce',
      SmtpCode: '550',
      ReportID: expect.any(String),
    });
    expect(details.Status).toBe('Bounced');
  });

  it('fires the Bounce webhook with Postmark’s HardBounce', async () => {
    const [bounce] = await callsOf(to, 'Bounce');
    expect(bounce!.json).toMatchObject({ RecordType: 'Bounce', Type: 'HardBounce', MessageID: messageId, Email: to });
  });

  it('is listed by /bounces and suppressed: the next send to it is refused with 406', async () => {
    const bounces = await eventually(async () => {
      const page = await get(org, `/bounces?emailFilter=${encodeURIComponent(to)}`);
      return page.body?.TotalCount === 1 ? page.body : undefined;
    }, 60_000);
    expect(bounces.Bounces[0]).toMatchObject({ Type: 'HardBounce', MessageID: messageId, Email: to, Inactive: true });
    const again = await send(org, to);
    expect(again.status).toBe(422);
    expect(again.body.ErrorCode).toBe(406);
  });

  it('changes nothing for another organization: it still sends to the address, and lists no bounce', async () => {
    await eventInDetails(org, messageId, 'Bounced');
    const theirs = await send(other, to.replace('bouncelater', 'plain'));
    expect(theirs.status).toBe(200);
    const same = await send(other, to);
    expect(same.status).toBe(200);
    const page = await get(other, `/bounces?emailFilter=${encodeURIComponent(to)}`);
    expect(page.body.TotalCount).toBe(0);
  });
});

describe('a recipient who marks the message as spam', () => {
  const to = unique('spamcomplaint');
  let messageId: string;

  beforeAll(async () => {
    const sent = await send(org, to);
    expect(sent.status).toBe(200);
    messageId = sent.body.MessageID;
  });

  it('fires the SpamComplaint webhook, is listed as a SpamComplaint and suppressed with that reason', async () => {
    const [complaint] = await callsOf(to, 'SpamComplaint');
    expect(complaint!.json).toMatchObject({ RecordType: 'SpamComplaint', Type: 'SpamComplaint', MessageID: messageId });
    const bounces = await eventually(async () => {
      const page = await get(org, `/bounces?emailFilter=${encodeURIComponent(to)}`);
      return page.body?.TotalCount === 1 ? page.body : undefined;
    }, 60_000);
    expect(bounces.Bounces[0]).toMatchObject({ Type: 'SpamComplaint', MessageID: messageId });
    const dump = await get(org, '/message-streams/outbound/suppressions/dump');
    expect(dump.body.Suppressions).toContainEqual(
      expect.objectContaining({ EmailAddress: to, SuppressionReason: 'SpamComplaint' }),
    );
    const again = await send(org, to);
    expect(again.status).toBe(422);
    expect(again.body.ErrorCode).toBe(406);
  });
});

describe('what must change nothing', () => {
  it('a DSN to a forged token is taken by the MX, recorded as ForgedToken, and suppresses no one', async () => {
    const to = unique('ann');
    const messageId = await delivered(org, to);
    const forged = `b.${'a'.repeat(44)}@${senderConfigFromEnv({}).returnPathDomain}`;
    expect(await sendToMx(forged, dsnAbout(messageId, to, forged, org.domain))).toMatch(/^250 /);
    await eventually(
      async () => (deadLetters.some((letter) => letter.error.includes('ForgedToken')) ? true : undefined),
      60_000,
      'the forged DSN among the dead letters',
    );
    const details = await detailsOf(org, messageId);
    expect(details.body.MessageEvents.map((event: { Type: string }) => event.Type)).not.toContain('Bounced');
    expect((await send(org, to)).status).toBe(200);
  });

  it('broken reports with a good token are recorded as unreadable, and the reader goes on', async () => {
    const to = unique('bob');
    const messageId = await delivered(org, to);
    const address = tokenAddress(messageId);
    const broken = [
      // MIME whose boundary is never found, and a report whose delivery-status part names no recipient.
      Buffer.from(
        'Content-Type: multipart/report; report-type=delivery-status; boundary="x"\r\n\r\nno parts at all\r\n',
      ),
      Buffer.from(
        'From: <MAILER-DAEMON@mx.dest.example.net>\r\nSubject: Undelivered\r\n' +
          'Content-Type: multipart/report; report-type=delivery-status; boundary="b"\r\n\r\n' +
          '--b\r\nContent-Type: text/plain\r\n\r\nSorry.\r\n' +
          '--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.dest.example.net\r\n\r\n--b--\r\n',
      ),
    ];
    const before = deadLetters.filter((letter) => letter.error.includes('Unreadable')).length;
    for (const raw of broken) expect(await sendToMx(address, raw)).toMatch(/^250 /);
    await eventually(
      async () =>
        deadLetters.filter((letter) => letter.error.includes('Unreadable')).length >= before + broken.length
          ? true
          : undefined,
      60_000,
      'both broken reports among the dead letters',
    );
    // The reader is still there: a good DSN about the same recipient is recorded after them.
    expect(await sendToMx(address, dsnAbout(messageId, to, address, org.domain))).toMatch(/^250 /);
    await eventInDetails(org, messageId, 'Bounced');
    const details = await detailsOf(org, messageId);
    const bounced = details.body.MessageEvents.filter((event: { Type: string }) => event.Type === 'Bounced');
    expect(bounced).toHaveLength(1);
  });
});
