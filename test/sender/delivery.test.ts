import { randomUUID } from 'node:crypto';
import { startProjector, type RunningProjector } from '@sendline/projector';
import { type Sender } from '@sendline/sender';
import {
  positionNewGroup,
  createClickHouse,
  readReturnPathAddress,
  returnPathKey,
  secretKeyFromEnv,
  type ClickHouseClient,
  type TestMailServer,
  groupOf,
} from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { call } from '../support/http';
import { addresses, eventually, uniqueName } from '../support/services';
import { dataOf, email, EventTap, startMailServer, startTestSender, testSenderConfig, typesOf } from './support';

/**
 * End to end against the real services: the API (in this process), the sender (in this process, fresh
 * consumer groups, only this file's organization), the activity projector (fresh group), and the test
 * mail server on a random loopback port as the sender's relay.
 */

let api: TestApi;
let org: TestOrganization;
let mail: TestMailServer;
let tap: EventTap;
let sender: Sender;
let projector: RunningProjector;
let clickhouse: ClickHouseClient;

const unique = (local: string) => `${local}-${randomUUID().slice(0, 8)}@dest.example.net`;
const send = (body: unknown) => call(api.baseUrl, 'POST', '/email', { key: org.liveKey, body });

beforeAll(async () => {
  api = await startTestApi();
  org = await createTestOrganization(api.deps);
  const mine = new Set([org.organizationId]);
  mail = await startMailServer(api.deps.accounts, [org]);
  tap = await EventTap.start(
    api.deps.store,
    [api.deps.store.topics.messages, api.deps.store.topics.suppressions, api.deps.store.topics.deliveryRetries],
    () => mine,
  );
  sender = await startTestSender(
    api.deps,
    [org.organizationId],
    testSenderConfig({ host: mail.host, port: mail.port }),
    secretKeyFromEnv(),
  );
  clickhouse = createClickHouse(addresses.clickhouseUrl);
  const groupPrefix = uniqueName('test-sender-projector');
  await positionNewGroup(api.deps.store, groupOf('activity', groupPrefix), [api.deps.store.topics.messages], 'latest');
  projector = await startProjector({
    store: api.deps.store,
    redis: api.deps.redis,
    clickhouse,
    database: addresses.clickhouseDatabase,
    groupPrefix,
    projections: ['activity'],
    retention: false,
  });
});

afterAll(async () => {
  await sender?.stop();
  await projector?.stop();
  await tap?.stop();
  await mail?.stop();
  await clickhouse?.close();
  await api?.close();
});

describe('a message sent through the API', () => {
  it('is received by the recipients’ server with a valid DKIM signature, and its events are Accepted, Sent, Delivered', async () => {
    // Each recipient in its own transaction, with its own envelope sender (below).
    const to = unique('ann');
    const cc = unique('carl');
    const bcc = unique('bea');
    const response = await send({
      From: `Shop <orders@${org.domain}>`,
      To: `Ann Example <${to}>`,
      Cc: cc,
      Bcc: bcc,
      ReplyTo: `help@${org.domain}`,
      Subject: 'Your receipt',
      Tag: 'receipts',
      TextBody: 'Thanks for your order.',
      HtmlBody: '<p>Thanks for your order. <img src="cid:logo.png"></p>',
      Headers: [{ Name: 'X-Order', Value: '42' }],
      Attachments: [
        {
          Name: 'receipt.txt',
          Content: Buffer.from('Order 42: 1 teapot').toString('base64'),
          ContentType: 'text/plain',
        },
        {
          Name: 'logo.png',
          Content: Buffer.from('not really a png').toString('base64'),
          ContentType: 'image/png',
          ContentID: 'cid:logo.png',
        },
      ],
    });
    expect(response.body).toMatchObject({ ErrorCode: 0 });
    const messageId: string = response.body.MessageID;

    const copies = await eventually(
      async () => {
        const found = mail.messages().filter((m) => m.messageId === `<${messageId}@${org.domain}>`);
        return found.length === 3 ? found : undefined;
      },
      30_000,
      'the message at the mail server, once for each recipient',
    );
    const selector = (await api.deps.accounts.domain(org.organizationId, org.domain))!.dkimSelector;
    const activeRecipients = [to, cc, bcc];
    const key = returnPathKey(secretKeyFromEnv());
    for (const copy of copies) {
      expect(copy.dkim).toEqual({ result: 'pass', domain: org.domain, selector });
      expect(copy.recipients).toHaveLength(1);
      // MAIL FROM:<b.{token}@…>: the domain's return path is not verified, so the service's own domain; the token
      // reads back to this message and this recipient (its index among the active recipients).
      expect(copy.envelopeFrom).toMatch(/^b\.[a-z2-7]{44}@bounces\.sendline\.dev$/);
      expect(readReturnPathAddress(key, copy.envelopeFrom)).toEqual({
        ok: true,
        messageId,
        recipientIndex: activeRecipients.indexOf(copy.recipients[0]!.toLowerCase()),
      });
    }
    expect(copies.flatMap((m) => m.recipients.map((r) => r.toLowerCase())).sort()).toEqual([to, cc, bcc].sort());
    // The same bytes (and DKIM signature) for every recipient.
    expect(new Set(copies.map((m) => m.raw!.toString('base64'))).size).toBe(1);
    const received = copies[0]!;
    const header = (name: string) => received.headers.find((h) => h.name.toLowerCase() === name.toLowerCase())?.value;
    expect(header('To')).toBe(`Ann Example <${to}>`);
    expect(header('Cc')).toBe(cc);
    expect(header('Reply-To')).toBe(`help@${org.domain}`);
    expect(header('Bcc')).toBeUndefined();
    expect(header('X-Order')).toBe('42');
    expect(header('Subject')).toBe('Your receipt');
    const raw = received.raw!.toString('utf8');
    expect(raw).toContain('multipart/alternative');
    expect(raw).toMatch(/Content-Type: multipart\/related/);
    expect(raw).toMatch(/Content-ID: <logo\.png>/);
    expect(raw).toMatch(/filename=receipt\.txt/);
    expect(raw).toContain(Buffer.from('Order 42: 1 teapot').toString('base64'));

    const events = await tap.waitForMessage(
      messageId,
      (found) => found.filter((e) => e.type === 'MessageDelivered').length === 3,
    );
    expect(typesOf(events.filter((e) => e.type.startsWith('Message')))).toEqual([
      'MessageAccepted',
      'MessageSent',
      'MessageDelivered',
      'MessageDelivered',
      'MessageDelivered',
    ]);
    const delivered = events.filter((e) => e.type === 'MessageDelivered');
    expect(delivered.map((e) => dataOf(e).recipient).sort()).toEqual([to, cc, bcc].sort());
    expect(dataOf(delivered[0])).toMatchObject({ destinationServer: mail.host });
    expect(dataOf(delivered[0]).smtpResponse).toMatch(/^250 /);
    for (const address of [to, cc, bcc]) expect(mail.deliveriesTo(address)).toBe(1);
    // Each Delivered records the envelope sender its recipient was sent with.
    const envelopeSenderOf = (address: string) =>
      copies.find((m) => m.recipients[0]!.toLowerCase() === address)!.envelopeFrom;
    for (const event of delivered) {
      expect(dataOf(event).returnPath).toBe(envelopeSenderOf(dataOf(event).recipient));
    }

    // The message's details, as a client reads them (the activity projector wrote them to ClickHouse).
    const details = await eventually(
      async () => {
        const answer = await call(api.baseUrl, 'GET', `/messages/outbound/${messageId}/details`, { key: org.liveKey });
        return answer.status === 200 && answer.body.Status === 'Delivered' ? answer.body : undefined;
      },
      30_000,
      'the message details to show Delivered',
    );
    for (const address of [to, cc, bcc]) {
      const kinds = details.MessageEvents.filter((e: any) => e.Recipient === address).map((e: any) => e.Type);
      expect(kinds).toEqual(['Accepted', 'Sent', 'Delivered']);
      const deliveredEvent = details.MessageEvents.find((e: any) => e.Recipient === address && e.Type === 'Delivered');
      expect(deliveredEvent.Details.ReturnPath).toBe(envelopeSenderOf(address));
    }
  });

  it('leaves with envelope senders under the From domain’s return path once that is verified', async () => {
    const domain = await org.addDomain(`${randomUUID().slice(0, 8)}.example.test`, { verifyReturnPath: true });
    expect(domain.returnPath).toMatchObject({ host: `bounces.${domain.name}`, verified: true });
    const to = unique('rp');
    const response = await send(email(`orders@${domain.name}`, to));
    expect(response.body).toMatchObject({ ErrorCode: 0 });
    const messageId: string = response.body.MessageID;
    const received = await eventually(
      async () => mail.messages().find((m) => m.messageId === `<${messageId}@${domain.name}>`),
      30_000,
      'the message at the mail server',
    );
    expect(received.envelopeFrom).toMatch(
      new RegExp(`^b\\.[a-z2-7]{44}@bounces\\.${domain.name.replace(/\./g, '\\.')}$`),
    );
    expect(readReturnPathAddress(returnPathKey(secretKeyFromEnv()), received.envelopeFrom)).toEqual({
      ok: true,
      messageId,
      recipientIndex: 0,
    });
    const [deliveredEvent] = await tap
      .waitForMessage(messageId, (found) => found.some((e) => e.type === 'MessageDelivered'))
      .then((events) => events.filter((e) => e.type === 'MessageDelivered'));
    expect(dataOf(deliveredEvent).returnPath).toBe(received.envelopeFrom);
  });
});

describe('a recipient whose server answers 550 5.1.1', () => {
  it('is hard-bounced and suppressed, the other recipient is delivered, and the next send to it gets ErrorCode 406', async () => {
    const bad = unique('hardbounce');
    const good = unique('good');
    const response = await send(email(`orders@${org.domain}`, `${bad}, ${good}`));
    const messageId: string = response.body.MessageID;
    const events = await tap.waitForMessage(
      messageId,
      (found) => found.some((e) => e.type === 'MessageHardBounced') && found.some((e) => e.type === 'MessageDelivered'),
    );
    const bounce = events.find((e) => e.type === 'MessageHardBounced');
    expect(dataOf(bounce).returnPath).toMatch(/^b\.[a-z2-7]{44}@bounces\.sendline\.dev$/);
    expect(dataOf(bounce)).toMatchObject({
      recipient: bad,
      statusCode: 550,
      enhancedStatus: '5.1.1',
      summary: 'Bad destination mailbox address',
    });
    expect(dataOf(bounce).smtpResponse).toMatch(/^550 5\.1\.1 /);
    expect(dataOf(events.find((e) => e.type === 'MessageDelivered')).recipient).toBe(good);

    const suppression = await eventually(
      async () => tap.events((e) => e.type === 'SuppressionAdded' && dataOf(e).emailAddress === bad)[0],
      10_000,
      'SuppressionAdded',
    );
    expect(suppression.metadata.organizationId).toBe(org.organizationId);
    expect(dataOf(suppression)).toMatchObject({ emailAddress: bad, reason: 'HardBounce', origin: 'Recipient' });

    const again = await send(email(`orders@${org.domain}`, bad));
    expect(again.status).toBe(422);
    expect(again.body.ErrorCode).toBe(406);
    expect(mail.deliveriesTo(bad)).toBe(0);
  });
});

describe('a recipient whose server answers 550 5.7.1', () => {
  it('is recorded as a policy rejection with the answer, and is not suppressed', async () => {
    const refused = unique('policy');
    const response = await send(email(`orders@${org.domain}`, refused));
    const messageId: string = response.body.MessageID;
    const events = await tap.waitForMessage(messageId, (found) =>
      found.some((e) => e.type === 'MessagePolicyRejected'),
    );
    expect(dataOf(events.find((e) => e.type === 'MessagePolicyRejected'))).toMatchObject({
      recipient: refused,
      statusCode: 550,
      enhancedStatus: '5.7.1',
    });
    // A hard bounce's suppression is appended together with the outcome; here there is none.
    const marker = unique('hardbounce');
    const later = await send(email(`orders@${org.domain}`, marker));
    await eventually(
      async () => tap.events((e) => e.type === 'SuppressionAdded' && dataOf(e).emailAddress === marker)[0],
      20_000,
      'a later hard bounce to be suppressed',
    );
    expect(later.body.ErrorCode).toBe(0);
    expect(tap.events((e) => e.type === 'SuppressionAdded' && dataOf(e).emailAddress === refused)).toEqual([]);
    const again = await send(email(`orders@${org.domain}`, refused));
    expect(again.body.ErrorCode).toBe(0);
  });
});

describe('a recipient whose server answers 552 5.2.2 (mailbox full)', () => {
  it('soft-bounces at once, without retries, and is not suppressed', async () => {
    const full = unique('mailboxfull');
    const response = await send(email(`orders@${org.domain}`, full));
    const events = await tap.waitForMessage(response.body.MessageID, (found) =>
      found.some((e) => e.type === 'MessageSoftBounced'),
    );
    expect(typesOf(events.filter((e) => e.type.startsWith('Message')))).toEqual([
      'MessageAccepted',
      'MessageSent',
      'MessageSoftBounced',
    ]);
    expect(dataOf(events.find((e) => e.type === 'MessageSoftBounced'))).toMatchObject({
      recipient: full,
      reason: 'PermanentFailure',
      attempts: 1,
    });
    expect(events.filter((e) => e.type === 'DeliveryRetryScheduled')).toEqual([]);
    expect((await send(email(`orders@${org.domain}`, full))).body.ErrorCode).toBe(0);
  });
});

describe('a recipient whose server answers 450', () => {
  it('is deferred, retried from the durable schedule, and delivered once the server takes it', async () => {
    const slow = unique('defer2+slow');
    const response = await send(email(`orders@${org.domain}`, slow));
    const messageId: string = response.body.MessageID;
    const events = await tap.waitForMessage(messageId, (found) => found.some((e) => e.type === 'MessageDelivered'));
    expect(typesOf(events.filter((e) => e.type.startsWith('Message')))).toEqual([
      'MessageAccepted',
      'MessageSent',
      'MessageDeferred',
      'MessageDeferred',
      'MessageDelivered',
    ]);
    const deferrals = events.filter((e) => e.type === 'MessageDeferred').map(dataOf);
    expect(deferrals.map((d) => d.attempt)).toEqual([1, 2]);
    expect(deferrals[0]).toMatchObject({ reason: 'response', recipient: slow });
    expect(deferrals[0]!.smtpResponse).toMatch(/^450 4\.2\.0 /);
    const schedule = events.filter((e) => e.type === 'DeliveryRetryScheduled').map(dataOf);
    expect(schedule.map((r) => [r.attempt, r.recipients])).toEqual([
      [1, [slow]],
      [2, [slow]],
    ]);
    expect(schedule[0]!.dueAt).toBe(deferrals[0]!.nextAttemptAt);
    expect(mail.deliveriesTo(slow)).toBe(1);
  });

  it('soft-bounces when the server still defers at the end of the retry window', async () => {
    const stuck = unique('defer');
    const dropped = unique('drop');
    const first = await send(email(`orders@${org.domain}`, stuck));
    const second = await send(email(`orders@${org.domain}`, dropped));
    const [stuckEvents, droppedEvents] = await Promise.all(
      [first, second].map((r) =>
        tap.waitForMessage(r.body.MessageID, (found) => found.some((e) => e.type === 'MessageSoftBounced'), 30_000),
      ),
    );
    const softBounce = dataOf(stuckEvents!.find((e) => e.type === 'MessageSoftBounced'));
    expect(softBounce).toMatchObject({ recipient: stuck, reason: 'RetriesExhausted' });
    expect(softBounce.smtpResponse).toMatch(/^450 /);
    expect(softBounce.attempts).toBeGreaterThanOrEqual(3);
    const deferred = stuckEvents!.filter((e) => e.type === 'MessageDeferred').map((e) => dataOf(e).attempt);
    expect(deferred).toEqual(deferred.map((_, i) => i + 1));
    // A dropped connection is a transient failure too.
    expect(dataOf(droppedEvents!.find((e) => e.type === 'MessageDeferred'))).toMatchObject({ reason: 'connection' });
    expect(dataOf(droppedEvents!.find((e) => e.type === 'MessageSoftBounced'))).toMatchObject({
      reason: 'RetriesExhausted',
    });
    expect(
      tap.events((e) => e.type === 'SuppressionAdded' && [stuck, dropped].includes(dataOf(e).emailAddress)),
    ).toEqual([]);
  });
});
