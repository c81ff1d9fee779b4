import { randomUUID } from 'node:crypto';
import * as postmark from 'postmark';
import type { MessageEvent, SuppressionEvent } from '@sendline/domain';
import { startProjector, type RunningProjector } from '@sendline/projector';
import { createClickHouse, migrate, type ClickHouseClient, type EventStore, type StoredEvent } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accepted, delivered, returned, RETURNED, sent, suppressionAfter } from '../projector/support';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { call } from '../support/http';
import { addresses, deleteTopicsAndDisconnect, eventually, freshEventStore, uniqueName } from '../support/services';

/**
 * Mail that comes back after the SMTP conversation, read through the API on the real services: on this file's own
 * topics, each message accepted, sent and delivered, then what the returned-mail reader appends for it (the message
 * decider's RecordReturn and, for a hard bounce or a complaint, the suppression decider's SuppressionAdded right
 * after): a DSN's hard bounce, a spam complaint, an automatic reply. The projector writes the activity store and the
 * suppression view; the API reads them.
 */

let store: EventStore;
let api: TestApi;
let org: TestOrganization;
let projector: RunningProjector;
let clickhouse: ClickHouseClient;
let client: postmark.ServerClient;

const unique = (local: string) => `${local}-${randomUUID().slice(0, 8)}@dest.example.net`;
const hard = unique('dsn');
const complained = unique('complained');
const away = unique('away');
const messageIds: Record<string, string> = {};
const reports: Record<string, string> = {};
const get = (path: string) => call(api.baseUrl, 'GET', path, { key: org.liveKey });

/** A message to `to`, delivered, then what came back about it (and the suppression it adds). */
function deliveredThen(to: string, outcome: Parameters<typeof returned>[2]): (MessageEvent | SuppressionEvent)[] {
  const message = accepted(org.organizationId, { to: [to], from: `orders@${org.domain}`, subject: `To ${to}` });
  messageIds[to] = message.data.messageId;
  reports[to] = `report-${randomUUID()}`;
  const done = [message, sent(message), delivered(message, to)];
  const back = returned(done, to, outcome, message.data.submittedAt + 60_000, reports[to]);
  return [...done, ...back, ...back.flatMap((event) => suppressionAfter(event))];
}

beforeAll(async () => {
  store = await freshEventStore('test-returned-mail');
  api = await startTestApi({ store });
  org = await createTestOrganization(api.deps);
  clickhouse = createClickHouse(addresses.clickhouseUrl);
  await migrate(clickhouse, addresses.clickhouseDatabase);
  projector = await startProjector({
    store,
    redis: api.deps.redis,
    clickhouse,
    database: addresses.clickhouseDatabase,
    groupPrefix: uniqueName('test-returned-mail'),
    projections: ['activity', 'suppressions'],
    retention: false,
    writer: { maxDelayMs: 100 },
  });
  client = new postmark.ServerClient(org.liveKey, {
    requestHost: api.baseUrl.replace(/^http:\/\//, ''),
    useHttps: false,
  });
  await store.append([
    ...deliveredThen(hard, RETURNED.hardBounce),
    ...deliveredThen(complained, RETURNED.complaint),
    ...deliveredThen(away, RETURNED.autoReply),
  ] as StoredEvent[]);
  await eventually(
    async () => {
      const [bounces, dump] = await Promise.all([get('/bounces'), get('/message-streams/outbound/suppressions/dump')]);
      return bounces.body?.TotalCount === 3 && dump.body?.Suppressions?.length === 2 ? true : undefined;
    },
    60_000,
    'three bounces and two suppressions projected',
  );
}, 120_000);

afterAll(async () => {
  await projector?.stop();
  await clickhouse?.close();
  await api?.close();
  if (store) await deleteTopicsAndDisconnect(store);
});

const bounceOf = async (email: string) => {
  const page = await get(`/bounces?emailFilter=${encodeURIComponent(email)}`);
  expect(page.body.TotalCount).toBe(1);
  return page.body.Bounces[0];
};
const eventsOf = async (email: string) => {
  const details = await get(`/messages/outbound/${messageIds[email]}/details`);
  return { status: details.body.Status, events: details.body.MessageEvents as { Type: string; Details: any }[] };
};

describe('a hard bounce a DSN reports after the delivery', () => {
  it('shows Delivered then Bounced, and the message Bounced', async () => {
    const { status, events } = await eventsOf(hard);
    expect(status).toBe('Bounced');
    expect(events.map((event) => event.Type)).toEqual(['Accepted', 'Sent', 'Delivered', 'Bounced']);
    expect(events[3]!.Details).toMatchObject({
      BounceType: 'HardBounce',
      DeliveryMessage: 'smtp; 550 5.1.1 <x>: mailbox unavailable',
      SmtpCode: '550',
      ReportID: reports[hard],
    });
    expect(events[3]!.Details.BounceID).toBe(String((await bounceOf(hard)).ID));
  });

  it('is listed by /bounces as a HardBounce with the DSN’s diagnostic, its address inactive; the dump has it', async () => {
    expect(await bounceOf(hard)).toMatchObject({
      RecordType: 'Bounce',
      Type: 'HardBounce',
      TypeCode: 1,
      Name: 'Hard bounce',
      MessageID: messageIds[hard],
      Details: 'smtp; 550 5.1.1 <x>: mailbox unavailable',
      Description: expect.stringContaining('unable to deliver'),
      Email: hard,
      From: `orders@${org.domain}`,
      Inactive: true,
      CanActivate: true,
      DumpAvailable: false,
    });
    const dump = await get('/message-streams/outbound/suppressions/dump');
    expect(dump.body.Suppressions).toContainEqual({
      EmailAddress: hard,
      SuppressionReason: 'HardBounce',
      Origin: 'Recipient',
      CreatedAt: expect.any(String),
    });
  });
});

describe('a spam complaint', () => {
  it('is an event of its own; the message stays Delivered', async () => {
    const { status, events } = await eventsOf(complained);
    expect(status).toBe('Delivered');
    expect(events.map((event) => event.Type)).toEqual(['Accepted', 'Sent', 'Delivered', 'SpamComplaint']);
    expect(events[3]!.Details).toMatchObject({ FeedbackType: 'abuse', ReportID: reports[complained] });
  });

  it('is listed as SpamComplaint (100001), filtered by type, its address inactive; the dump says SpamComplaint', async () => {
    expect(await bounceOf(complained)).toMatchObject({
      Type: 'SpamComplaint',
      TypeCode: 100001,
      Name: 'Spam complaint',
      Details: 'Reported as spam by the recipient',
      Inactive: true,
      CanActivate: true,
    });
    const byType = await get('/bounces?type=SpamComplaint');
    expect(byType.body.Bounces.map((b: { Email: string }) => b.Email)).toEqual([complained]);
    expect((await get('/bounces?inactive=true')).body.TotalCount).toBe(2);
    const dump = await get('/message-streams/outbound/suppressions/dump');
    expect(dump.body.Suppressions).toContainEqual({
      EmailAddress: complained,
      SuppressionReason: 'SpamComplaint',
      Origin: 'Recipient',
      CreatedAt: expect.any(String),
    });
  });

  it('keeps the address from being sent to: 406, the address among the inactive ones', async () => {
    const refused = await call(api.baseUrl, 'POST', '/email', {
      key: org.liveKey,
      body: { From: `orders@${org.domain}`, To: complained, Subject: 'Again', TextBody: 'Hello' },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.ErrorCode).toBe(406);
    expect(refused.body.Message).toContain(`Found inactive addresses: ${complained}.`);
  });

  it('is counted by the statistics and the postmark client reads it', async () => {
    const stats = await client.getDeliveryStatistics();
    expect(stats.InactiveMails).toBe(2);
    expect(stats.Bounces).toEqual([
      { Name: 'All', Count: 3 },
      { Type: 'HardBounce', Name: 'Hard bounce', Count: 1 },
      { Type: 'AutoResponder', Name: 'Auto responder', Count: 1 },
      { Type: 'SpamComplaint', Name: 'Spam complaint', Count: 1 },
    ]);
    const overview = await client.getOutboundOverview({});
    expect(overview).toMatchObject({ Sent: 3, Bounced: 1, SpamComplaints: 1, SpamComplaintsRate: 33.333 });
    const complaints = await client.getBounces({
      count: 10,
      offset: 0,
      type: postmark.Models.BounceType.SpamComplaint,
    });
    expect(complaints.Bounces.map((b) => [b.Email, b.TypeCode])).toEqual([[complained, 100001]]);
  });

  it('is reactivated by PUT /bounces/{id}/activate as any bounce is: the suppression goes', async () => {
    const bounce = await bounceOf(complained);
    const activated = await call(api.baseUrl, 'PUT', `/bounces/${bounce.ID}/activate`, { key: org.liveKey });
    expect(activated.status).toBe(200);
    expect(activated.body.Bounce).toMatchObject({ Type: 'SpamComplaint', Inactive: false, CanActivate: false });
    const dump = await get('/message-streams/outbound/suppressions/dump');
    expect(dump.body.Suppressions.map((s: { EmailAddress: string }) => s.EmailAddress)).not.toContain(complained);
    expect((await bounceOf(complained)).Inactive).toBe(false);
  });
});

describe('an automatic reply', () => {
  it('shows in /bounces as AutoResponder and suppresses nothing', async () => {
    expect(await bounceOf(away)).toMatchObject({
      Type: 'AutoResponder',
      TypeCode: 64,
      Details: 'Out of office until Monday',
      Inactive: false,
      CanActivate: false,
    });
    const { status, events } = await eventsOf(away);
    expect(status).toBe('Delivered');
    expect(events.map((event) => event.Type)).toEqual(['Accepted', 'Sent', 'Delivered', 'AutoResponder']);
    const dump = await get('/message-streams/outbound/suppressions/dump');
    expect(dump.body.Suppressions.map((s: { EmailAddress: string }) => s.EmailAddress)).not.toContain(away);
  });
});
