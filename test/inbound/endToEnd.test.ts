/**
 * Inbound mail end to end on the real services (Kafka, the registry, Redis, ClickHouse), every app in this process on
 * this file's own topics and groups: the API, our MX, the inbound reader, the projector (inbound view) and the
 * webhooks (their caller posts the inbound hook's calls), a DNS server on loopback publishing the sender's SPF, and a
 * loopback HTTP receiver standing for the customer's InboundHookUrl.
 *
 *   nodemailer → our MX (RCPT for {hash}+{mailbox}@inbound domain) → mail.received → inbound reader (postal-mime,
 *   mailauth) → email.inbound + webhooks.calls → POST Postmark's inbound JSON → the `postmark` client reads it back.
 *
 * And: inbound rules block (recorded, not posted) until bypassed; a 403 stops the retries and a retry posts again;
 * the MX stays no relay; a message whose MIME cannot be read still arrives, said so; organizations never see each
 * other's inbound mail.
 */
import { randomUUID } from 'node:crypto';
import type { SendMailOptions } from 'nodemailer';
import * as postmark from 'postmark';
import {
  createClickHouse,
  DEFAULT_INBOUND_DOMAIN,
  MemoryZone,
  rebuildInbound,
  migrate,
  startDnsServer,
  type ClickHouseClient,
  type ConsumedEvent,
  type StoredEvent,
  type EventStore,
  type RunningDnsServer,
} from '@sendline/infra';
import type { MxServer } from '@sendline/mx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmtpDialog } from '../mx/support';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { call } from '../support/http';
import { addresses, deleteTopicsAndDisconnect, eventually, freshEventStore, uniqueName } from '../support/services';
import { deleteTopicsUnder, Receiver, signatureValid, type ReceivedCall } from '../webhooks/support';
import { inboundApiServices, sendToMx as sendMail, startInboundPipeline, type InboundPipeline } from './support';

const INBOUND_DOMAIN = DEFAULT_INBOUND_DOMAIN;
const SENDER_DOMAIN = `${randomUUID().slice(0, 8)}.sender.example`;

let store: EventStore;
let api: TestApi;
let org: TestOrganization;
let other: TestOrganization;
let clickhouse: ClickHouseClient;
let mx: MxServer;
let dns: RunningDnsServer;
let pipeline: InboundPipeline;
let receiver: Receiver;
let client: postmark.ServerClient;
let otherClient: postmark.ServerClient;
let server: postmark.Models.Server & { InboundHookSigningSecret?: string };
/** Subjects the receiver answers 403 (Postmark's "stop retrying"), until a test lets them through. */
const refused = new Set<string>();

const callsAbout = (subject: string) => receiver.calls.filter((c) => c.json.Subject === subject);
const firstCall = (subject: string) =>
  eventually(async () => callsAbout(subject)[0], 60_000, `the inbound hook called about '${subject}'`);

const sendToMx = (mail: SendMailOptions) => sendMail(mx, mail);

/** Waits until the organization's list shows the message with `subject` in `status`. */
const listed = (as: postmark.ServerClient, subject: string, status: string) =>
  eventually(
    async () => {
      const found = await as.getInboundMessages({ count: 50, offset: 0, subject });
      const message = found.InboundMessages.find((m) => m.Subject === subject);
      return message?.Status === status ? message : undefined;
    },
    60_000,
    `'${subject}' listed as ${status}`,
  );

beforeAll(async () => {
  store = await freshEventStore('test-inbound');
  clickhouse = createClickHouse(addresses.clickhouseUrl);
  await migrate(clickhouse, addresses.clickhouseDatabase);
  api = await startTestApi((deps) => ({ store, ...inboundApiServices({ deps, store, clickhouse }) }));
  org = await createTestOrganization(api.deps);
  other = await createTestOrganization(api.deps);
  const mine = new Set([org.organizationId, other.organizationId]);
  const zone = new MemoryZone([
    { type: 'TXT', name: SENDER_DOMAIN, value: 'v=spf1 ip4:127.0.0.1 -all' },
    { type: 'TXT', name: `_dmarc.${SENDER_DOMAIN}`, value: 'v=DMARC1; p=none' },
  ]);
  dns = await startDnsServer({ zone });
  pipeline = await startInboundPipeline({
    name: 'test-inbound',
    store,
    api,
    clickhouse,
    dnsServer: dns.address,
    accept: (organizationId) => mine.has(organizationId),
    answer: (received) => (refused.has(received.json.Subject as string) ? 403 : 200),
  });
  ({ mx, receiver } = pipeline);
  const options = { requestHost: api.baseUrl.replace(/^http:\/\//, ''), useHttps: false };
  client = new postmark.ServerClient(org.liveKey, options);
  otherClient = new postmark.ServerClient(other.liveKey, options);
  server = await client.editServer({ InboundHookUrl: receiver.url, RawEmailEnabled: true });
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

describe('the server settings', () => {
  it('give each organization its own inbound address at the inbound domain, read with the postmark client', async () => {
    const mine = await client.getServer();
    const theirs = await otherClient.getServer();
    expect(mine.InboundAddress).toMatch(new RegExp(`^[0-9a-f]{32}@${INBOUND_DOMAIN.replace(/\./g, '\\.')}$`));
    expect(mine.InboundAddress).toBe(`${mine.InboundHash}@${INBOUND_DOMAIN}`);
    expect(theirs.InboundAddress).not.toBe(mine.InboundAddress);
    expect(mine).toMatchObject({ InboundHookUrl: receiver.url, RawEmailEnabled: true, InboundSpamThreshold: 0 });
  });

  it('refuses a hook URL that is no URL with 422, naming it', async () => {
    const answer = await call(api.baseUrl, 'PUT', '/server', { key: org.liveKey, body: { InboundHookUrl: 'nope' } });
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ ErrorCode: 1403, Message: expect.stringMatching(/Url/) });
  });
});

describe('a reply sent over SMTP to the inbound address with a mailbox hash', () => {
  const subject = `Re: ticket ${randomUUID().slice(0, 8)}`;
  let posted: ReceivedCall;

  beforeAll(async () => {
    const [hash, domain] = server.InboundAddress.split('@');
    const answer = await sendToMx({
      envelope: { from: `ada@${SENDER_DOMAIN}`, to: [`${hash}+ticket-42@${domain}`] },
      from: { name: 'Ada Lovelace', address: `ada@${SENDER_DOMAIN}` },
      to: [{ name: 'Support', address: `${hash}+ticket-42@${domain}` }],
      cc: 'boss@example.org',
      replyTo: `reply@${SENDER_DOMAIN}`,
      subject,
      headers: { 'X-PM-Tag': 'support' },
      text: 'Thanks, that fixed it.\n\nOn Mon, Nov 2, 2026 at 9:00 AM Support <support@example.com> wrote:\n> Did you try turning it off and on?\n',
      html: '<p>Thanks, that fixed it.</p>',
      attachments: [{ filename: 'notes.txt', content: 'line one\nline two\n', contentType: 'text/plain' }],
    });
    expect(answer).toMatch(/^250 /);
    posted = await firstCall(subject);
  }, 90_000);

  it("arrives at the InboundHookUrl as Postmark's inbound JSON", () => {
    const json = posted.json;
    expect(json).toMatchObject({
      From: `ada@${SENDER_DOMAIN}`,
      FromName: 'Ada Lovelace',
      FromFull: { Email: `ada@${SENDER_DOMAIN}`, Name: 'Ada Lovelace', MailboxHash: '' },
      ToFull: [{ Email: expect.stringMatching(/\+ticket-42@/), Name: 'Support', MailboxHash: 'ticket-42' }],
      Cc: 'boss@example.org',
      CcFull: [{ Email: 'boss@example.org', Name: '', MailboxHash: '' }],
      OriginalRecipient: expect.stringMatching(new RegExp(`^${server.InboundHash}\\+ticket-42@`)),
      ReplyTo: `reply@${SENDER_DOMAIN}`,
      Subject: subject,
      MailboxHash: 'ticket-42',
      Tag: 'support',
      MessageStream: 'inbound',
    });
    expect(json.To).toContain(`"Support" <${server.InboundHash}+ticket-42@${INBOUND_DOMAIN}>`);
    expect(json.TextBody).toContain('Did you try turning it off and on?');
    expect(json.HtmlBody.trim()).toBe('<p>Thanks, that fixed it.</p>');
    expect(json.StrippedTextReply).toBe('Thanks, that fixed it.');
    expect(json.Date).toMatch(/\d{4}/);
    expect(json.MessageID).toMatch(/^[0-9a-f-]{36}$/);
    expect(json.Attachments).toEqual([
      {
        Name: 'notes.txt',
        Content: Buffer.from('line one\nline two\n').toString('base64'),
        ContentType: 'text/plain',
        ContentLength: 18,
        ContentID: '',
      },
    ]);
    expect(json.RawEmail).toContain(`Subject: ${subject}`);
  });

  it('carries the SPF, DKIM and DMARC results in Authentication-Results, among the headers', () => {
    const headers = posted.json.Headers as { Name: string; Value: string }[];
    const results = headers.find((h) => h.Name === 'Authentication-Results')?.Value ?? '';
    expect(results).toMatch(/spf=pass/);
    expect(results).toMatch(/dkim=none/);
    expect(results).toMatch(/dmarc=/);
    expect(headers.some((h) => h.Name.toLowerCase() === 'message-id')).toBe(true);
    expect(headers.some((h) => h.Name.toLowerCase() === 'subject')).toBe(false);
  });

  it("is signed as the webhooks are, with the organization's inbound hook secret", () => {
    expect(server.InboundHookSigningSecret).toMatch(/^whsec_/);
    expect(signatureValid(posted, server.InboundHookSigningSecret!)).toBe(true);
    expect(posted.headers['webhook-id']).toBeTruthy();
  });

  it('is listed and detailed by the postmark client as Processed, once', async () => {
    const message = await listed(client, subject, 'Processed');
    expect(message).toMatchObject({
      MessageID: posted.json.MessageID,
      MailboxHash: 'ticket-42',
      MessageStream: 'inbound',
    });
    expect(message.Attachments).toEqual([
      { Name: 'notes.txt', ContentType: 'text/plain', ContentLength: 18, ContentID: '' },
    ]);
    const byHash = await client.getInboundMessages({ count: 10, offset: 0, mailboxHash: 'ticket-42' });
    expect(byHash.InboundMessages.map((m) => m.MessageID)).toContain(posted.json.MessageID);
    const details = await client.getInboundMessageDetails(posted.json.MessageID as string);
    expect(details).toMatchObject({
      MessageID: posted.json.MessageID,
      TextBody: posted.json.TextBody,
      StrippedTextReply: 'Thanks, that fixed it.',
      Status: 'Processed',
      BlockedReason: '',
    });
    expect(callsAbout(subject)).toHaveLength(1);
  });

  it('is invisible to another organization: not listed, its details 404 with ErrorCode 701', async () => {
    const theirs = await otherClient.getInboundMessages({ count: 50, offset: 0, subject });
    expect(theirs.InboundMessages).toEqual([]);
    const answer = await call(api.baseUrl, 'GET', `/messages/inbound/${posted.json.MessageID}/details`, {
      key: other.liveKey,
    });
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ ErrorCode: 701 });
    const retry = await call(api.baseUrl, 'PUT', `/messages/inbound/${posted.json.MessageID}/retry`, {
      key: other.liveKey,
    });
    expect(retry.status).toBe(404);
  });
});

describe('an inbound rule', () => {
  const subject = `Blocked ${randomUUID().slice(0, 8)}`;
  let ruleId: number;

  it('is created, listed and deleted with the postmark client', async () => {
    const created = await client.createInboundRuleTrigger({ Rule: `Spam.${SENDER_DOMAIN}` });
    expect(created.Rule).toBe(`spam.${SENDER_DOMAIN}`);
    ruleId = created.ID;
    const rules = await client.getInboundRuleTriggers({ count: 10, offset: 0 });
    expect(rules.InboundRules).toContainEqual({ ID: ruleId, Rule: `spam.${SENDER_DOMAIN}` });
    expect((await otherClient.getInboundRuleTriggers({ count: 10, offset: 0 })).InboundRules).toEqual([]);
    const again = await call(api.baseUrl, 'POST', '/triggers/inboundRules', {
      key: org.liveKey,
      body: { Rule: `spam.${SENDER_DOMAIN}` },
    });
    expect(again.status).toBe(422);
    expect(again.body).toMatchObject({ ErrorCode: 1611 });
  });

  it('blocks the mail of its domain: recorded as Blocked with the reason, not posted; a bypass posts it', async () => {
    const answer = await sendToMx({
      envelope: { from: `x@spam.${SENDER_DOMAIN}`, to: [server.InboundAddress] },
      from: `x@spam.${SENDER_DOMAIN}`,
      to: server.InboundAddress,
      subject,
      text: 'Buy now',
    });
    expect(answer).toMatch(/^250 /);
    const blocked = await listed(client, subject, 'Blocked');
    const details = await client.getInboundMessageDetails(blocked.MessageID);
    expect(details.BlockedReason).toContain(`spam.${SENDER_DOMAIN}`);
    expect(callsAbout(subject)).toEqual([]);

    const bypassed = await client.bypassBlockedInboundMessage(blocked.MessageID);
    expect(bypassed.ErrorCode).toBe(0);
    const posted = await firstCall(subject);
    expect(posted.json.MessageID).toBe(blocked.MessageID);
    await listed(client, subject, 'Processed');
    const twice = await call(api.baseUrl, 'PUT', `/messages/inbound/${blocked.MessageID}/bypass`, { key: org.liveKey });
    expect(twice.status).toBe(422);
    expect(twice.body).toMatchObject({ ErrorCode: 1620 });
  });

  it('is deleted, and an unknown one is 404', async () => {
    const deleted = await client.deleteInboundRuleTrigger(ruleId);
    expect(deleted.ErrorCode).toBe(0);
    expect((await client.getInboundRuleTriggers({ count: 10, offset: 0 })).InboundRules).toEqual([]);
    const again = await call(api.baseUrl, 'DELETE', `/triggers/inboundRules/${ruleId}`, { key: org.liveKey });
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ ErrorCode: 1612 });
  });
});

describe('a hook that answers 403', () => {
  const subject = `Refused ${randomUUID().slice(0, 8)}`;

  it('stops the retries (Failed after one call); a retry posts it again with the same Webhook-Id', async () => {
    refused.add(subject);
    await sendToMx({
      envelope: { from: `ada@${SENDER_DOMAIN}`, to: [server.InboundAddress] },
      from: `ada@${SENDER_DOMAIN}`,
      to: server.InboundAddress,
      subject,
      text: 'Hello',
    });
    const failed = await listed(client, subject, 'Failed');
    expect(callsAbout(subject)).toHaveLength(1);
    refused.delete(subject);
    const retried = await client.retryInboundHookForMessage(failed.MessageID);
    expect(retried.ErrorCode).toBe(0);
    await listed(client, subject, 'Processed');
    const calls = callsAbout(subject);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.headers['webhook-id']).toBe(calls[0]!.headers['webhook-id']);
    const notFailed = await call(api.baseUrl, 'PUT', `/messages/inbound/${failed.MessageID}/retry`, {
      key: org.liveKey,
    });
    expect(notFailed.status).toBe(422);
    expect(notFailed.body).toMatchObject({ ErrorCode: 1621 });
  });
});

describe('the MX', () => {
  async function rcpt(address: string) {
    const { dialog } = await SmtpDialog.open(mx.port);
    try {
      await dialog.command('EHLO sender.example');
      await dialog.command(`MAIL FROM:<ada@${SENDER_DOMAIN}>`);
      return await dialog.command(`RCPT TO:<${address}>`);
    } finally {
      dialog.close();
    }
  }

  it('refuses an inbound address of no organization, and postmaster, with 550 5.1.1', async () => {
    expect(await rcpt(`${'f'.repeat(32)}@${INBOUND_DOMAIN}`)).toMatchObject({
      code: 550,
      text: expect.stringMatching(/^5\.1\.1 /),
    });
    expect(await rcpt(`postmaster@${INBOUND_DOMAIN}`)).toMatchObject({
      code: 550,
      text: expect.stringMatching(/^5\.1\.1 /),
    });
  });

  it('still refuses any other domain: it is no relay', async () => {
    expect(await rcpt('someone@example.org')).toMatchObject({ code: 550, text: expect.stringMatching(/^5\.7\.1 /) });
  });
});

describe('a message whose MIME cannot be read', () => {
  it('still arrives, with what the envelope says and the reason in X-Sendline-Unparsed; the reader goes on', async () => {
    const subject = `Broken ${randomUUID().slice(0, 8)}`;
    const parts = Array.from({ length: 6000 }, () => '--b\r\n').join('');
    const raw = `From: ada@${SENDER_DOMAIN}\r\nSubject: ${subject}\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n${parts}`;
    await sendToMx({ envelope: { from: `ada@${SENDER_DOMAIN}`, to: [server.InboundAddress] }, raw });
    const posted = await eventually(
      async () =>
        receiver.calls.find(
          (c) =>
            (c.json.Headers as { Name: string; Value: string }[] | undefined)?.some(
              (h) => h.Name === 'X-Sendline-Unparsed',
            ) && (c.json.RawEmail as string | undefined)?.includes(subject),
        ),
      60_000,
      'the unreadable message posted',
    );
    expect(posted.json.From).toBe(`ada@${SENDER_DOMAIN}`);
    const after = `After ${randomUUID().slice(0, 8)}`;
    await sendToMx({
      envelope: { from: `ada@${SENDER_DOMAIN}`, to: [server.InboundAddress] },
      from: `ada@${SENDER_DOMAIN}`,
      to: server.InboundAddress,
      subject: after,
      text: 'still here',
    });
    await firstCall(after);
  });
});

describe('a hook URL with credentials in it, as Postmark users write them', () => {
  it('posts with HTTP Basic, shows the password masked, and keeps it when the masked URL comes back', async () => {
    const withCredentials = receiver.url.replace('http://', 'http://hook-user:s3cr%40t@');
    const edited = await client.editServer({ InboundHookUrl: withCredentials });
    const masked = receiver.url.replace('http://', 'http://hook-user:********@');
    expect(edited.InboundHookUrl).toBe(masked);
    expect(JSON.stringify(await client.getServer())).not.toContain('s3cr');
    await client.editServer({ InboundHookUrl: masked });
    const subject = `Basic ${randomUUID().slice(0, 8)}`;
    await sendToMx({
      envelope: { from: `ada@${SENDER_DOMAIN}`, to: [server.InboundAddress] },
      from: `ada@${SENDER_DOMAIN}`,
      to: server.InboundAddress,
      subject,
      text: 'With credentials',
    });
    const posted = await firstCall(subject);
    expect(posted.headers.authorization).toBe(`Basic ${Buffer.from('hook-user:s3cr@t').toString('base64')}`);
    await client.editServer({ InboundHookUrl: receiver.url });
  });
});

describe('the inbound view', () => {
  it('is rebuilt from email.inbound by a replay, equal to the live one for these organizations', async () => {
    const replay = rebuildInbound(clickhouse, addresses.clickhouseDatabase, uniqueName('test').replace(/-/g, '_'));
    await replay.prepare();
    try {
      await store.readAll([store.topics.inbound], (items) =>
        replay.apply(items.filter((item): item is ConsumedEvent<StoredEvent> => item.event !== undefined)),
      );
      await replay.settle();
      const mine = [org.organizationId, other.organizationId];
      // The live projection may still be writing the last messages: compared once it has caught up.
      const prints = await eventually(
        async () => {
          const found = await replay.fingerprints();
          return mine.every((id) => JSON.stringify(found.live.get(id)) === JSON.stringify(found.rebuilt.get(id)))
            ? found
            : undefined;
        },
        60_000,
        'the live inbound view equal to its replay',
      );
      expect(prints.rebuilt.get(org.organizationId)?.counts).toMatchObject({ bypasses: 1 });
      expect(prints.rebuilt.get(org.organizationId)!.counts.inboundMessages).toBeGreaterThanOrEqual(4);
    } finally {
      await replay.discard();
    }
  });
});
