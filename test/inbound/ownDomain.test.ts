/**
 * An organization's own inbound domain end to end on the real services (Kafka, the registry, Redis, ClickHouse): the
 * API (PUT /server InboundDomain, PUT /server/verifyInboundDomain looking the MX up on a DNS server on loopback), our
 * MX (the code path `npm start` runs: the accounts view's index of verified domains), the inbound reader, the
 * projector and the webhooks' caller posting to a loopback receiver standing for the InboundHookUrl.
 *
 * Mail to an unverified or unknown domain is refused like any relaying (550 5.7.1); once the MX record is found, mail
 * to any address there is the organization's inbound mail, with the MailboxHash after `+`; a second organization
 * cannot claim the domain nor read the mail.
 */
import { randomUUID } from 'node:crypto';
import type { SendMailOptions } from 'nodemailer';
import * as postmark from 'postmark';
import {
  createClickHouse,
  createMxResolver,
  DEFAULT_INBOUND_DOMAIN,
  MemoryZone,
  migrate,
  startDnsServer,
  type ClickHouseClient,
  type EventStore,
  type RunningDnsServer,
} from '@sendline/infra';
import type { MxServer } from '@sendline/mx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmtpDialog } from '../mx/support';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { call } from '../support/http';
import { addresses, deleteTopicsAndDisconnect, eventually, freshEventStore } from '../support/services';
import { deleteTopicsUnder, Receiver, signatureValid } from '../webhooks/support';
import { inboundApiServices, sendToMx as sendMail, startInboundPipeline, type InboundPipeline } from './support';

const MAIL_HOST = 'mx.sendline.test';
const OWN_DOMAIN = `reply.${randomUUID().slice(0, 8)}.example`;
const SENDER = 'ada@sender.example';

let store: EventStore;
let api: TestApi;
let org: TestOrganization;
let other: TestOrganization;
let clickhouse: ClickHouseClient;
let mx: MxServer;
let zone: MemoryZone;
let dns: RunningDnsServer;
let pipeline: InboundPipeline;
let receiver: Receiver;
let client: postmark.ServerClient;
let otherClient: postmark.ServerClient;

interface ServerJson {
  InboundDomain: string;
  InboundDomainVerified: boolean;
  InboundDomainDnsRecords: { Type: string; Name: string; Value: string; Priority: number }[];
  InboundHookSigningSecret: string;
}

const put = (key: string, path: string, body?: unknown) =>
  call(api.baseUrl, 'PUT', path, { key, ...(body !== undefined && { body }) });

async function rcpt(address: string) {
  const { dialog } = await SmtpDialog.open(mx.port);
  try {
    await dialog.command('EHLO sender.example');
    await dialog.command(`MAIL FROM:<${SENDER}>`);
    return await dialog.command(`RCPT TO:<${address}>`);
  } finally {
    dialog.close();
  }
}

const sendToMx = (mail: SendMailOptions) => sendMail(mx, mail);

beforeAll(async () => {
  store = await freshEventStore('test-inbound-domain');
  clickhouse = createClickHouse(addresses.clickhouseUrl);
  await migrate(clickhouse, addresses.clickhouseDatabase);
  zone = new MemoryZone([]);
  dns = await startDnsServer({ zone });
  api = await startTestApi((deps) => ({
    store,
    ...inboundApiServices({
      deps,
      store,
      clickhouse,
      settings: { mailHost: MAIL_HOST, resolveMx: createMxResolver({ servers: [dns.address], timeoutMs: 1000 }) },
    }),
  }));
  org = await createTestOrganization(api.deps);
  other = await createTestOrganization(api.deps);
  const mine = new Set([org.organizationId, other.organizationId]);
  pipeline = await startInboundPipeline({
    name: 'test-inbound-domain',
    store,
    api,
    clickhouse,
    dnsServer: dns.address,
    accept: (organizationId) => mine.has(organizationId),
  });
  ({ mx, receiver } = pipeline);
  const options = { requestHost: api.baseUrl.replace(/^http:\/\//, ''), useHttps: false };
  client = new postmark.ServerClient(org.liveKey, options);
  otherClient = new postmark.ServerClient(other.liveKey, options);
  await client.editServer({ InboundHookUrl: `${receiver.url}/mine` });
  await otherClient.editServer({ InboundHookUrl: `${receiver.url}/theirs` });
}, 120_000);

afterAll(async () => {
  await pipeline?.stop();
  await dns?.close();
  await clickhouse?.close();
  await api?.close();
  if (store) {
    await deleteTopicsUnder(store, store.topics.webhookCalls);
    await deleteTopicsAndDisconnect(store);
  }
});

describe('an own inbound domain, before its MX is published', () => {
  it('is stored unverified, with the MX record to publish', async () => {
    const answer = await put(org.liveKey, '/server', { InboundDomain: OWN_DOMAIN.toUpperCase() });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      InboundDomain: OWN_DOMAIN,
      InboundDomainVerified: false,
      InboundDomainDnsRecords: [{ Type: 'MX', Name: OWN_DOMAIN, Value: MAIL_HOST, Priority: 10 }],
    });
  });

  it('takes no mail: 550 5.7.1 as any relaying', async () => {
    expect(await rcpt(`support@${OWN_DOMAIN}`)).toMatchObject({ code: 550, text: expect.stringMatching(/^5\.7\.1 /) });
  });

  it('is not verified while no MX points to the mail host: 422, naming the record to publish', async () => {
    const none = await put(org.liveKey, '/server/verifyInboundDomain');
    expect(none.status).toBe(422);
    expect(none.body).toMatchObject({
      ErrorCode: 1605,
      Message: expect.stringContaining(`MX ${OWN_DOMAIN} 10 ${MAIL_HOST}`),
    });
    zone.publish({ type: 'MX', name: OWN_DOMAIN, value: 'mx.elsewhere.example', priority: 10 });
    const elsewhere = await put(org.liveKey, '/server/verifyInboundDomain');
    expect(elsewhere.body).toMatchObject({ ErrorCode: 1605, Message: expect.stringContaining('mx.elsewhere.example') });
    expect(await rcpt(`support@${OWN_DOMAIN}`)).toMatchObject({ code: 550 });
  });

  it('cannot be claimed by another organization', async () => {
    const answer = await put(other.liveKey, '/server', { InboundDomain: OWN_DOMAIN });
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ ErrorCode: 1603, Message: expect.stringContaining(OWN_DOMAIN) });
    expect((await otherClient.getServer()).InboundDomain).toBe('');
  });

  it("refuses the service's own domains, a return path and another organization's sending domain", async () => {
    const theirs = await other.addDomain(`${randomUUID().slice(0, 8)}.theirs.example`, { verify: false });
    const refusals = [
      [DEFAULT_INBOUND_DOMAIN, "the service's own"],
      [`x.${MAIL_HOST}`, "the service's own"],
      [theirs.returnPath!.host, 'return path'],
      [theirs.name, "another organization's sending domain"],
      [`reply.${theirs.name}`, "another organization's sending domain"],
    ] as const;
    for (const [domain, why] of refusals) {
      const answer = await put(org.liveKey, '/server', { InboundDomain: domain });
      expect(answer.status, domain).toBe(422);
      expect(answer.body).toMatchObject({ ErrorCode: 1603, Message: expect.stringContaining(why) });
    }
    // Its own sending domain's subdomain is fine for the other organization itself.
    const own = await put(other.liveKey, '/server', { InboundDomain: `reply.${theirs.name}` });
    expect(own.body).toMatchObject({ InboundDomain: `reply.${theirs.name}`, InboundDomainVerified: false });
    expect((await client.getServer()).InboundDomain).toBe(OWN_DOMAIN);
  });

  it('without a domain, verification is refused with 422', async () => {
    expect((await put(other.liveKey, '/server', { InboundDomain: '' })).status).toBe(200);
    const answer = await put(other.liveKey, '/server/verifyInboundDomain');
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ ErrorCode: 1604 });
  });
});

describe('an own inbound domain whose MX is found', () => {
  const subject = `Re: order ${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    zone.publish({ type: 'MX', name: OWN_DOMAIN, value: MAIL_HOST, priority: 10 });
  });

  it('is verified (once)', async () => {
    const answer = await put(org.liveKey, '/server/verifyInboundDomain');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ InboundDomain: OWN_DOMAIN, InboundDomainVerified: true });
    const again = await put(org.liveKey, '/server/verifyInboundDomain');
    expect(again.body).toMatchObject({ InboundDomainVerified: true });
    expect(((await client.getServer()) as unknown as ServerJson).InboundDomainVerified).toBe(true);
  });

  it("takes mail for any address there as the organization's inbound mail, with its MailboxHash", async () => {
    expect(await rcpt(`anyone@${OWN_DOMAIN}`)).toMatchObject({ code: 250 });
    const answer = await sendToMx({
      envelope: { from: SENDER, to: [`orders+4711@${OWN_DOMAIN}`] },
      from: { name: 'Ada', address: SENDER },
      to: [{ name: 'Orders', address: `orders+4711@${OWN_DOMAIN}` }],
      subject,
      text: 'Where is my parcel?',
    });
    expect(answer).toMatch(/^250 /);
    const posted = await eventually(
      async () => receiver.calls.find((c) => c.json.Subject === subject),
      60_000,
      `the inbound hook called about '${subject}'`,
    );
    expect(posted.json).toMatchObject({
      OriginalRecipient: `orders+4711@${OWN_DOMAIN}`,
      MailboxHash: '4711',
      ToFull: [{ Email: `orders+4711@${OWN_DOMAIN}`, Name: 'Orders', MailboxHash: '4711' }],
      From: SENDER,
      TextBody: expect.stringContaining('Where is my parcel?'),
      MessageStream: 'inbound',
    });
    expect(posted.json.To).toContain(`orders+4711@${OWN_DOMAIN}`);
    const settings = (await client.getServer()) as unknown as ServerJson;
    expect(signatureValid(posted, settings.InboundHookSigningSecret)).toBe(true);
    // Posted to this organization's hook (signed with its secret, not the other's), and its alone to read.
    const theirSecret = ((await otherClient.getServer()) as unknown as ServerJson).InboundHookSigningSecret;
    expect(signatureValid(posted, theirSecret)).toBe(false);
    const details = await eventually(
      async () => client.getInboundMessageDetails(posted.json.MessageID as string).catch(() => undefined),
      60_000,
      'the message listed',
    );
    expect(details.OriginalRecipient).toBe(`orders+4711@${OWN_DOMAIN}`);
    const theirs = await call(api.baseUrl, 'GET', `/messages/inbound/${posted.json.MessageID as string}/details`, {
      key: other.liveKey,
    });
    expect(theirs.status).toBe(404);
  }, 90_000);

  it('stays no relay for other domains, and a changed domain starts unverified again', async () => {
    expect(await rcpt(`support@sub.${OWN_DOMAIN}`)).toMatchObject({
      code: 550,
      text: expect.stringMatching(/^5\.7\.1 /),
    });
    const changed = await put(org.liveKey, '/server', { InboundDomain: `other.${OWN_DOMAIN}` });
    expect(changed.body).toMatchObject({ InboundDomainVerified: false });
    expect(await rcpt(`support@${OWN_DOMAIN}`)).toMatchObject({ code: 550, text: expect.stringMatching(/^5\.7\.1 /) });
    // Let go, it can be claimed by the other organization.
    const claimed = await put(other.liveKey, '/server', { InboundDomain: OWN_DOMAIN });
    expect(claimed.body).toMatchObject({ InboundDomain: OWN_DOMAIN, InboundDomainVerified: false });
  });
});
