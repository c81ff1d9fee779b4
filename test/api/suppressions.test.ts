import { randomUUID } from 'node:crypto';
import { decideSuppression, initialSuppressionState, type SuppressionEvent } from '@sendline/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { eventsWhere } from '../support/events';
import { call } from '../support/http';

let api: TestApi;
let org: TestOrganization;
let other: TestOrganization;

beforeAll(async () => {
  api = await startTestApi();
  [org, other] = await Promise.all([createTestOrganization(api.deps), createTestOrganization(api.deps)]);
});
afterAll(async () => {
  await api?.close();
});

async function suppress(
  organization: TestOrganization,
  address: string,
  reason: 'HardBounce' | 'ManualSuppression' = 'ManualSuppression',
) {
  const events = decideSuppression(
    {
      type: 'AddSuppression',
      data: { emailAddress: address, reason, origin: reason === 'HardBounce' ? 'Recipient' : 'Customer' },
      metadata: { organizationId: organization.organizationId, now: Date.now(), eventIds: [randomUUID()] },
    },
    initialSuppressionState(),
  ) as SuppressionEvent[];
  await api.deps.store.append(events);
  await api.deps.suppressions.apply(events);
}

const dump = (key: string, query = '') =>
  call(api.baseUrl, 'GET', `/message-streams/outbound/suppressions/dump${query}`, { key });
const remove = (key: string, body: unknown, stream = 'outbound') =>
  call(api.baseUrl, 'POST', `/message-streams/${stream}/suppressions/delete`, { key, body });

describe('GET /v1/message-streams/outbound/suppressions/dump', () => {
  it('lists every suppression of the organization, lowercased, in Postmark’s shape, and ignores paging parameters', async () => {
    const a = `Bounced-${randomUUID().slice(0, 8)}@Example.net`;
    await suppress(org, a, 'HardBounce');
    const response = await dump(org.liveKey, '?count=100&offset=0');
    expect(response.status).toBe(200);
    const entry = response.body.Suppressions.find((s: { EmailAddress: string }) => s.EmailAddress === a.toLowerCase());
    expect(entry).toMatchObject({ SuppressionReason: 'HardBounce', Origin: 'Recipient' });
    expect(entry.CreatedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  it('never shows another organization’s suppressions', async () => {
    const theirs = `theirs-${randomUUID().slice(0, 8)}@example.net`;
    await suppress(other, theirs);
    const mine = await dump(org.liveKey);
    expect(mine.body.Suppressions.map((s: { EmailAddress: string }) => s.EmailAddress)).not.toContain(theirs);
    const their = await dump(other.liveKey);
    expect(their.body.Suppressions.map((s: { EmailAddress: string }) => s.EmailAddress)).toContain(theirs);
  });

  it('refuses another stream with ErrorCode 1235', async () => {
    const response = await call(api.baseUrl, 'GET', '/message-streams/broadcast/suppressions/dump', {
      key: org.liveKey,
    });
    expect(response.status).toBe(422);
    expect(response.body.ErrorCode).toBe(1235);
  });
});

describe('POST /v1/message-streams/outbound/suppressions/delete', () => {
  it('deletes each valid address on its own, fails the invalid ones, and a send to a deleted address goes through at once', async () => {
    const gone = `gone-${randomUUID().slice(0, 8)}@example.net`;
    await suppress(org, gone);
    const blocked = await call(api.baseUrl, 'POST', '/email', {
      key: org.liveKey,
      body: { From: `s@${org.domain}`, To: gone, TextBody: 'x' },
    });
    expect(blocked.body.ErrorCode).toBe(406);

    const response = await remove(org.liveKey, {
      Suppressions: [{ EmailAddress: gone }, { EmailAddress: 'not an address' }, { EmailAddress: 'never@example.net' }],
    });
    expect(response.status).toBe(200);
    expect(response.body.Suppressions).toEqual([
      { EmailAddress: gone, Status: 'Deleted', Message: null },
      { EmailAddress: 'not an address', Status: 'Failed', Message: expect.stringContaining('Invalid email address') },
      { EmailAddress: 'never@example.net', Status: 'Deleted', Message: null },
    ]);
    const deleted = await eventsWhere(
      api.deps.store,
      api.deps.store.topics.suppressions,
      (e) => e.type === 'SuppressionDeleted' && (e.data as { emailAddress: string }).emailAddress === gone,
    );
    expect(deleted).toHaveLength(1);

    const sent = await call(api.baseUrl, 'POST', '/email', {
      key: org.liveKey,
      body: { From: `s@${org.domain}`, To: gone, TextBody: 'x' },
    });
    expect(sent.body.ErrorCode).toBe(0);
  });

  it('lets a test key with the scope remove suppressions', async () => {
    const gone = `t-${randomUUID().slice(0, 8)}@example.net`;
    await suppress(org, gone);
    const response = await remove(org.testKey, { Suppressions: [{ EmailAddress: gone }] });
    expect(response.body.Suppressions[0].Status).toBe('Deleted');
    expect(
      (await dump(org.liveKey)).body.Suppressions.map((s: { EmailAddress: string }) => s.EmailAddress),
    ).not.toContain(gone);
  });

  it('answers ErrorCode 300 without a Suppressions array', async () => {
    const response = await remove(org.liveKey, { Addresses: [] });
    expect(response.status).toBe(422);
    expect(response.body.ErrorCode).toBe(300);
  });

  it('answers ErrorCode 1235 for another stream', async () => {
    const response = await remove(org.liveKey, { Suppressions: [{ EmailAddress: 'a@example.net' }] }, 'broadcast');
    expect(response.status).toBe(422);
    expect(response.body.ErrorCode).toBe(1235);
  });

  it('needs the email:send scope', async () => {
    const { token } = await org.issueKey(['email:read']);
    const response = await remove(token, { Suppressions: [{ EmailAddress: 'a@example.net' }] });
    expect(response.status).toBe(403);
  });

  it('one organization’s delete never touches another’s suppression', async () => {
    const shared = `shared-${randomUUID().slice(0, 8)}@example.net`;
    await suppress(other, shared);
    await remove(org.liveKey, { Suppressions: [{ EmailAddress: shared }] });
    expect(
      (await dump(other.liveKey)).body.Suppressions.map((s: { EmailAddress: string }) => s.EmailAddress),
    ).toContain(shared);
  });
});
