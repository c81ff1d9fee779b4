import { randomUUID } from 'node:crypto';
import * as postmark from 'postmark';
import { startProjector, type RunningProjector } from '@sendline/projector';
import { type Sender } from '@sendline/sender';
import {
  positionNewGroup,
  createClickHouse,
  secretKeyFromEnv,
  type ClickHouseClient,
  type TestMailServer,
  groupOf,
} from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailServer, startTestSender, testSenderConfig } from '../sender/support';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { call } from '../support/http';
import { addresses, eventually, uniqueName } from '../support/services';

/**
 * Postmark's bounce, statistics and message-source endpoints on real events: messages sent through the API, the
 * sender (in this process, only this file's organization) delivering them to the test mail server, which refuses
 * `hardbounce…` (550 5.1.1), `policy…` (550 5.7.1) and `mailboxfull…` (552 5.2.2) recipients, and the activity
 * projector writing ClickHouse. Read over HTTP and through the postmark 5.1.0 client.
 */

let api: TestApi;
let org: TestOrganization;
let stranger: TestOrganization;
let mail: TestMailServer;
let sender: Sender;
let projector: RunningProjector;
let clickhouse: ClickHouseClient;
let client: postmark.ServerClient;

const tag = `bounces-${randomUUID().slice(0, 8)}`;
const unique = (local: string) => `${local}-${randomUUID().slice(0, 8)}@dest.example.net`;
const hard = unique('hardbounce');
const policy = unique('policy');
const full = unique('mailboxfull');
const good = unique('good');
const ids: Record<string, string> = {};
const today = new Date().toISOString().slice(0, 10);

const get = (path: string, key = org.liveKey) => call(api.baseUrl, 'GET', path, { key });

beforeAll(async () => {
  api = await startTestApi();
  org = await createTestOrganization(api.deps);
  stranger = await createTestOrganization(api.deps);
  mail = await startMailServer(api.deps.accounts, [org]);
  sender = await startTestSender(
    api.deps,
    [org.organizationId],
    testSenderConfig({ host: mail.host, port: mail.port }),
    secretKeyFromEnv(),
  );
  clickhouse = createClickHouse(addresses.clickhouseUrl);
  const groupPrefix = uniqueName('test-bounces-projector');
  await positionNewGroup(api.deps.store, groupOf('activity', groupPrefix), [api.deps.store.topics.messages], 'latest');
  projector = await startProjector({
    store: api.deps.store,
    redis: api.deps.redis,
    clickhouse,
    database: addresses.clickhouseDatabase,
    groupPrefix,
    projections: ['activity'],
    retention: false,
    writer: { maxDelayMs: 100 },
  });
  client = new postmark.ServerClient(org.liveKey, {
    requestHost: api.baseUrl.replace(/^http:\/\//, ''),
    useHttps: false,
  });

  for (const to of [hard, policy, full, good]) {
    const sent = await call(api.baseUrl, 'POST', '/email', {
      key: org.liveKey,
      body: {
        From: `Shop <orders@${org.domain}>`,
        To: to,
        Subject: `To ${to}`,
        TextBody: 'Hello',
        HtmlBody: '<p>Hello</p>',
        Tag: tag,
        Attachments: [
          { Name: 'a.txt', Content: Buffer.from('attached').toString('base64'), ContentType: 'text/plain' },
        ],
      },
    });
    expect(sent.body.ErrorCode).toBe(0);
    ids[to] = sent.body.MessageID;
  }
  // Every outcome in the activity store: three bounces, and the fourth message delivered.
  await eventually(
    async () => {
      const bounces = await get(`/bounces?tag=${tag}`);
      const delivered = await get(`/messages/outbound/${ids[good]}/details`);
      return bounces.body?.TotalCount === 3 && delivered.body?.Status === 'Delivered' ? true : undefined;
    },
    60_000,
    'three bounces and a delivery in the activity store',
  );
}, 120_000);

afterAll(async () => {
  await sender?.stop();
  await projector?.stop();
  await mail?.stop();
  await clickhouse?.close();
  await api?.close();
});

const byEmail = async (email: string) => {
  const page = await get(`/bounces?tag=${tag}&emailFilter=${encodeURIComponent(email)}`);
  expect(page.body.TotalCount).toBe(1);
  return page.body.Bounces[0];
};

describe('GET /v1/bounces', () => {
  it('lists each final failure in Postmark’s fields, newest first', async () => {
    const page = await get(`/bounces?tag=${tag}&count=10&offset=0`);
    expect(page.status).toBe(200);
    const bounces = page.body.Bounces as any[];
    expect(bounces.map((b) => [b.Email, b.Type, b.TypeCode]).sort()).toEqual(
      [
        [hard, 'HardBounce', 1],
        [full, 'SoftBounce', 4096],
        [policy, 'Blocked', 100006],
      ].sort(),
    );
    const times = bounces.map((b) => Date.parse(b.BouncedAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const hardBounce = bounces.find((b) => b.Email === hard);
    expect(hardBounce).toEqual({
      RecordType: 'Bounce',
      ID: expect.any(Number),
      Type: 'HardBounce',
      TypeCode: 1,
      Name: 'Hard bounce',
      Tag: tag,
      MessageID: ids[hard],
      ServerID: 0,
      Description: expect.stringContaining('unable to deliver'),
      Details: expect.stringMatching(/^550 5\.1\.1 /),
      Email: hard,
      From: `orders@${org.domain}`,
      BouncedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      DumpAvailable: false,
      Inactive: true,
      CanActivate: true,
      Subject: `To ${hard}`,
      MessageStream: 'outbound',
    });
    expect(Number.isSafeInteger(hardBounce.ID) && hardBounce.ID > 0).toBe(true);
    // A hard bounce suppresses its address; a soft bounce and a refusal by policy do not.
    expect(bounces.find((b) => b.Email === full)).toMatchObject({ Inactive: false, CanActivate: false });
    expect(bounces.find((b) => b.Email === policy)).toMatchObject({ Inactive: false, CanActivate: false });
  });

  it('filters by type, inactive, address, message and dates; pages with count and offset', async () => {
    const count = async (query: string) => (await get(`/bounces?tag=${tag}&${query}`)).body.TotalCount;
    expect(await count('type=HardBounce')).toBe(1);
    expect(await count('type=softbounce')).toBe(1);
    expect(await count('type=SpamComplaint')).toBe(0);
    expect(await count('inactive=true')).toBe(1);
    expect(await count('inactive=false')).toBe(2);
    expect(await count(`emailfilter=${encodeURIComponent(policy.slice(0, 12).toUpperCase())}`)).toBe(1);
    expect(await count(`messageID=${ids[full]}`)).toBe(1);
    expect(await count(`fromdate=${today}&todate=${today}`)).toBe(3);
    expect(await count('todate=2020-01-01')).toBe(0);
    const second = await get(`/bounces?tag=${tag}&count=1&offset=1`);
    expect(second.body.TotalCount).toBe(3);
    expect(second.body.Bounces).toHaveLength(1);
  });

  it('shows one organization nothing of another’s', async () => {
    const mine = await byEmail(hard);
    const theirs = await get(`/bounces?tag=${tag}`, stranger.liveKey);
    expect(theirs.body).toEqual({ TotalCount: 0, Bounces: [] });
    const one = await get(`/bounces/${mine.ID}`, stranger.liveKey);
    expect(one.status).toBe(404);
    expect(one.body.ErrorCode).toBe(701);
  });
});

describe('GET /v1/bounces/{id}, /dump and /v1/deliverystats', () => {
  it('reads one bounce by its ID, with an empty dump; an unknown ID is 404', async () => {
    const listed = await byEmail(policy);
    const one = await get(`/bounces/${listed.ID}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(listed);
    expect((await get(`/bounces/${listed.ID}/dump`)).body).toEqual({ Body: '' });
    // The message's details name the same bounce.
    const details = await get(`/messages/outbound/${ids[policy]}/details`);
    const rejected = details.body.MessageEvents.find((e: { Type: string }) => e.Type === 'Rejected');
    expect(rejected).toBeDefined();
    const hardDetails = await get(`/messages/outbound/${ids[hard]}/details`);
    const bounced = hardDetails.body.MessageEvents.find((e: { Type: string }) => e.Type === 'Bounced');
    expect(bounced.Details.BounceID).toBe(String((await byEmail(hard)).ID));
    const unknown = await get('/bounces/1');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ ErrorCode: 701, Message: 'Bounce 1 was not found.' });
  });
});

describe('the postmark 5.1.0 client', () => {
  it('getBounces, getBounce, getBounceDump, getDeliveryStatistics', async () => {
    const page = await client.getBounces({ count: 10, offset: 0, tag });
    expect(page.TotalCount).toBe(3);
    const hardBounce = page.Bounces.find((b) => b.Email === hard)!;
    expect(hardBounce).toMatchObject({ Type: 'HardBounce', Inactive: true, MessageID: ids[hard] });
    const filtered = await client.getBounces({
      count: 10,
      offset: 0,
      tag,
      type: postmark.Models.BounceType.SoftBounce,
      inactive: false,
      fromDate: today,
      toDate: today,
      messageStream: 'outbound',
    });
    expect(filtered.Bounces.map((b) => b.Email)).toEqual([full]);
    expect(await client.getBounce(hardBounce.ID)).toEqual(hardBounce);
    expect(await client.getBounceDump(hardBounce.ID)).toEqual({ Body: '' });
    const stats = await client.getDeliveryStatistics();
    expect(stats.InactiveMails).toBeGreaterThanOrEqual(1);
    expect(stats.Bounces[0]).toEqual({ Name: 'All', Count: 3 });
    expect(stats.Bounces.slice(1)).toEqual([
      { Type: 'HardBounce', Name: 'Hard bounce', Count: 1 },
      { Type: 'SoftBounce', Name: 'Soft bounce', Count: 1 },
      { Type: 'Blocked', Name: 'ISP block', Count: 1 },
    ]);
    const missing = await client.getBounce(1).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(postmark.Errors.PostmarkError);
    expect((missing as postmark.Errors.PostmarkError).statusCode).toBe(404);
  });

  it('getOutboundOverview, getSentCounts, getBounceCounts', async () => {
    const filter = { tag, fromDate: today, toDate: today };
    const overview = await client.getOutboundOverview(filter);
    expect(overview).toMatchObject({ Sent: 4, Bounced: 3, BounceRate: 75, SMTPApiErrors: 0, SpamComplaints: 0 });
    expect(await client.getSentCounts(filter)).toEqual({ Days: [{ Date: today, Sent: 4 }], Sent: 4 });
    const counts = { HardBounce: 1, SoftBounce: 1, Transient: 0, SMTPApiError: 0, Blocked: 1 };
    expect(await client.getBounceCounts(filter)).toEqual({ Days: [{ Date: today, ...counts }], ...counts });
    // Another organization, the same tag: nothing.
    expect((await get(`/stats/outbound?tag=${tag}`, stranger.liveKey)).body).toMatchObject({ Sent: 0, Bounced: 0 });
    expect((await get(`/stats/outbound/sends?tag=${tag}&fromdate=2020-01-01&todate=2020-01-02`)).body).toEqual({
      Days: [],
      Sent: 0,
    });
  });

  it('getOutboundMessageDump: the source as sent, but for the DKIM-Signature', async () => {
    const messageId = ids[good]!;
    const received = mail.messages().find((m) => m.messageId === `<${messageId}@${org.domain}>`)!;
    const dump = await client.getOutboundMessageDump(messageId);
    const sent = received.raw!.toString('utf8');
    // The sender put the signature in front of the composed message: one header, folded over several lines.
    expect(sent).toMatch(/^DKIM-Signature: /);
    const unsigned = sent.replace(/^DKIM-Signature: [^\r\n]*(\r\n[ \t][^\r\n]*)*\r\n/, '');
    expect(dump.Body).toBe(unsigned);
    expect(dump.Body).toContain(Buffer.from('attached').toString('base64'));
    // An offset the partition does not hold is no event (an answer, not a read that waits for it to be written).
    expect(await api.deps.store.readAt(api.deps.store.topics.messages, 0, 10n ** 15n)).toBeUndefined();
    const other = await client.getOutboundMessageDump(randomUUID()).catch((error: unknown) => error);
    expect((other as postmark.Errors.PostmarkError).statusCode).toBe(404);
  });

  it('activateBounce: the address is no longer suppressed, the bounce shows it', async () => {
    const hardBounce = await byEmail(hard);
    const activated = await client.activateBounce(hardBounce.ID);
    expect(activated.Message).toBe('OK');
    expect(activated.Bounce).toMatchObject({ ID: hardBounce.ID, Email: hard, Inactive: false, CanActivate: false });
    const dump = await call(api.baseUrl, 'GET', '/message-streams/outbound/suppressions/dump', { key: org.liveKey });
    expect(dump.body.Suppressions.map((s: { EmailAddress: string }) => s.EmailAddress)).not.toContain(hard);
    expect((await client.getBounce(hardBounce.ID)).Inactive).toBe(false);
    // Another organization cannot activate it.
    const theirs = await call(api.baseUrl, 'PUT', `/bounces/${hardBounce.ID}/activate`, { key: stranger.liveKey });
    expect(theirs.status).toBe(404);
  });
});
