/**
 * Compatibility with the official `postmark` npm client, version 5.1.0, pointed at
 * this API by its host setting alone (host plus /v1, no scheme) and one of our keys.
 */
import { randomUUID } from 'node:crypto';
import * as postmark from 'postmark';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { startActivityProjection } from '../support/projector';
import { eventually } from '../support/services';

let api: TestApi;
let org: TestOrganization;
let client: postmark.ServerClient;

beforeAll(async () => {
  api = await startTestApi();
  org = await createTestOrganization(api.deps);
  client = new postmark.ServerClient(org.liveKey, {
    requestHost: api.baseUrl.replace(/^http:\/\//, ''),
    useHttps: false,
  });
});
afterAll(async () => {
  await api?.close();
});

describe('the postmark 5.1.0 client', () => {
  it('sendEmail', async () => {
    const result = await client.sendEmail({
      From: `Sender <sender@${org.domain}>`,
      To: 'reader@example.net',
      Subject: 'Hello from postmark.js',
      TextBody: 'Hi',
      HtmlBody: '<p>Hi</p>',
      Tag: 'compat',
      Metadata: { order: '42' },
      Headers: [{ Name: 'X-Order', Value: '42' }],
      Attachments: [
        { Name: 'a.txt', Content: Buffer.from('hello').toString('base64'), ContentType: 'text/plain', ContentID: null },
      ],
      TrackOpens: true,
      TrackLinks: postmark.Models.LinkTrackingOptions.HtmlOnly,
      MessageStream: 'outbound',
    });
    expect(result.ErrorCode).toBe(0);
    expect(result.Message).toBe('OK');
    expect(result.To).toBe('reader@example.net');
    expect(result.MessageID).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sendEmailBatch', async () => {
    const results = await client.sendEmailBatch([
      { From: `s@${org.domain}`, To: 'one@example.net', Subject: 'One', TextBody: 'x' },
      { From: `s@${org.domain}`, To: 'bad address', Subject: 'Two', TextBody: 'x' },
    ]);
    expect(results.map((r) => r.ErrorCode)).toEqual([0, 300]);
    expect(results[0]?.To).toBe('one@example.net');
  });

  it('turns a fully suppressed send into InactiveRecipientsError with the addresses', async () => {
    const gone = `gone-${randomUUID().slice(0, 8)}@example.net`;
    const { decideSuppression, initialSuppressionState } = await import('@sendline/domain');
    const events = decideSuppression(
      {
        type: 'AddSuppression',
        data: { emailAddress: gone, reason: 'HardBounce', origin: 'Recipient' },
        metadata: { organizationId: org.organizationId, now: Date.now(), eventIds: [randomUUID()] },
      },
      initialSuppressionState(),
    );
    await api.deps.store.append(events);
    await api.deps.suppressions.apply(events as never);
    const failure = await client
      .sendEmail({ From: `s@${org.domain}`, To: gone, Subject: 'x', TextBody: 'x' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(postmark.Errors.InactiveRecipientsError);
    expect((failure as postmark.Errors.InactiveRecipientsError).recipients).toEqual([gone]);
    expect((failure as postmark.Errors.InactiveRecipientsError).statusCode).toBe(422);
  });

  it('turns a bad key into InvalidAPIKeyError', async () => {
    const stranger = new postmark.ServerClient(`sl_live_${'z'.repeat(40)}`, {
      requestHost: api.baseUrl.replace(/^http:\/\//, ''),
      useHttps: false,
    });
    await expect(
      stranger.sendEmail({ From: `s@${org.domain}`, To: 'a@example.net', Subject: 'x', TextBody: 'x' }),
    ).rejects.toBeInstanceOf(postmark.Errors.InvalidAPIKeyError);
  });

  it('getSuppressions and deleteSuppressions', async () => {
    const gone = `dump-${randomUUID().slice(0, 8)}@example.net`;
    const { decideSuppression, initialSuppressionState } = await import('@sendline/domain');
    const events = decideSuppression(
      {
        type: 'AddSuppression',
        data: { emailAddress: gone, reason: 'ManualSuppression', origin: 'Customer' },
        metadata: { organizationId: org.organizationId, now: Date.now(), eventIds: [randomUUID()] },
      },
      initialSuppressionState(),
    );
    await api.deps.store.append(events);
    await api.deps.suppressions.apply(events as never);

    const dump = await client.getSuppressions('outbound');
    expect(dump.Suppressions.map((s) => s.EmailAddress)).toContain(gone);
    const deleted = await client.deleteSuppressions('outbound', { Suppressions: [{ EmailAddress: gone }] });
    expect(deleted.Suppressions).toEqual([{ EmailAddress: gone, Status: 'Deleted', Message: null }]);
    expect((await client.getSuppressions('outbound')).Suppressions.map((s) => s.EmailAddress)).not.toContain(gone);
  });
});

describe('the postmark 5.1.0 client reading activity', () => {
  it('getOutboundMessages and getOutboundMessageDetails find a sent message', async () => {
    const projection = await startActivityProjection(api.deps.store);
    try {
      const tag = `pm-${randomUUID().slice(0, 8)}`;
      const sent = await client.sendEmail({
        From: `s@${org.domain}`,
        To: 'list@example.net',
        Subject: 'Listed',
        TextBody: 'body text',
        Tag: tag,
      });
      const found = await eventually(
        async () => {
          const page = await client.getOutboundMessages({ count: 10, offset: 0, tag });
          return Number(page.TotalCount) > 0 ? page : undefined;
        },
        30_000,
        'the message in the list',
      );
      expect(found.Messages[0]).toMatchObject({
        MessageID: sent.MessageID,
        Subject: 'Listed',
        Tag: tag,
        Recipients: ['list@example.net'],
      });
      expect(found.Messages[0]?.To).toEqual([{ Email: 'list@example.net', Name: '' }]);

      // Under load the activity store may answer a query after its deadline: the API then says 503, retriable
      // (docs/api.md, "When a service is down"), and a client retries — as here.
      const details = await eventually(
        () => client.getOutboundMessageDetails(sent.MessageID),
        30_000,
        'the message details',
      );
      expect(details.TextBody).toBe('body text');
      expect(details.MessageEvents.map((e) => e.Type)).toContain('Accepted');
    } finally {
      await projection.stop();
    }
  });

  it('getOutboundMessageDetails of another organization’s message fails (404, ErrorCode 701)', async () => {
    const other = await createTestOrganization(api.deps);
    const theirs = await new postmark.ServerClient(other.liveKey, {
      requestHost: api.baseUrl.replace(/^http:\/\//, ''),
      useHttps: false,
    }).sendEmail({
      From: `s@${other.domain}`,
      To: 'x@example.net',
      Subject: 'Theirs',
      TextBody: 'x',
    });
    const failure = (await client
      .getOutboundMessageDetails(theirs.MessageID)
      .catch((e: unknown) => e)) as postmark.Errors.PostmarkError;
    expect(failure.statusCode).toBe(404);
    expect(failure.code).toBe(701);
  });
});
