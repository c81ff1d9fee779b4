/** The official TypeScript client against the running API, one test per method. */
import { randomUUID } from 'node:crypto';
import { decideSuppression, initialSuppressionState } from '@sendline/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, SendlineError } from '../../client/src';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { startActivityProjection } from '../support/projector';
import { eventually } from '../support/services';

let api: TestApi;
let org: TestOrganization;
let client: Client;
let projection: Awaited<ReturnType<typeof startActivityProjection>>;

beforeAll(async () => {
  api = await startTestApi();
  org = await createTestOrganization(api.deps);
  client = new Client(org.liveKey, { baseUrl: api.baseUrl });
  projection = await startActivityProjection(api.deps.store);
});
afterAll(async () => {
  await projection?.stop();
  await api?.close();
});

describe('the official client against the running API', () => {
  it('emails.send, then emails.list and emails.get find the message', async () => {
    const tag = `client-${randomUUID().slice(0, 8)}`;
    const sent = await client.emails.send(
      {
        from: `Shop <shop@${org.domain}>`,
        to: ['ann@example.net', 'bob@example.net'],
        subject: 'Your order',
        textBody: 'Thanks!',
        htmlBody: '<p>Thanks!</p>',
        tag,
        metadata: { order: '7' },
        attachments: [{ filename: 'r.txt', content: new TextEncoder().encode('receipt'), contentType: 'text/plain' }],
      },
      { idempotencyKey: randomUUID() },
    );
    expect(sent.errorCode).toBe(0);
    expect(sent.to).toBe('ann@example.net, bob@example.net');

    const listed = await eventually(
      async () => {
        const page = await client.emails.list({ tag, count: 10 });
        return page.totalCount > 0 ? page : undefined;
      },
      30_000,
      'the message in the activity list',
    );
    expect(listed.messages[0]?.messageId).toBe(sent.messageId);
    expect(listed.messages[0]?.recipients).toEqual(['ann@example.net', 'bob@example.net']);

    const details = await client.emails.get(sent.messageId);
    expect(details.subject).toBe('Your order');
    expect(details.textBody).toBe('Thanks!');
    expect(details.messageEvents.map((e) => e.type)).toContain('Accepted');
  });

  it('emails.sendBatch returns results in order, a refused entry as ok: false', async () => {
    const results = await client.emails.sendBatch([
      { from: `s@${org.domain}`, to: 'one@example.net', textBody: 'x' },
      { from: `s@${org.domain}`, to: 'not an address', textBody: 'x' },
    ]);
    expect(results[0]).toMatchObject({ ok: true });
    expect(results[1]).toMatchObject({ ok: false, errorCode: 300 });
  });

  it('suppressions.list and suppressions.delete', async () => {
    const gone = `gone-${randomUUID().slice(0, 8)}@example.net`;
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
    expect((await client.suppressions.list()).map((s) => s.emailAddress)).toContain(gone);
    expect(await client.suppressions.delete(gone)).toEqual([{ emailAddress: gone, status: 'Deleted', message: null }]);
    expect((await client.suppressions.list()).map((s) => s.emailAddress)).not.toContain(gone);
  });

  it('domains.list, members.list and me', async () => {
    const domains = await client.domains.list();
    expect(domains.map((d) => d.name)).toEqual([org.domain]);
    expect(domains[0]?.verified).toBe(true);
    const members = await client.members.list();
    expect(members.map((m) => m.email)).toContain('admin@example.test');
    const me = await client.me();
    expect(me.organization.id).toBe(org.organizationId);
    expect(me.key.mode).toBe('live');
    expect(JSON.stringify(me)).not.toContain(org.liveKey);
  });

  it('a refused send throws SendlineError with the status and the ErrorCode', async () => {
    const failure = await client.emails
      .send({ from: 'x@elsewhere.example', to: 'a@example.net', textBody: 'x' })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(SendlineError);
    expect(failure).toMatchObject({ status: 422, code: 'http_error', errorCode: 400 });
  });

  it('emails.get of an unknown message is a 404 with ErrorCode 701', async () => {
    await expect(client.emails.get(randomUUID())).rejects.toMatchObject({ status: 404, errorCode: 701 });
  });
});
