import { randomUUID } from 'node:crypto';
import { API_KEY_SCOPES, type Role } from '@sendline/domain';
import { createTxtResolver, MemoryZone, startDnsServer, type RunningDnsServer } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestOrganization,
  ensureTestSystemOrganization,
  startTestApi,
  type TestApi,
  type TestOrganization,
} from '../support/api';
import { call } from '../support/http';
import { startActivityProjection } from '../support/projector';
import { eventually } from '../support/services';
import { ConsoleClient, openSignInMailbox, originOf, testConsoleServices, type SignInMailbox } from './support';

/**
 * What a console member may read and change (issue 13): the server refuses what a role may not do (403, the
 * domain's words), an organization's member never reaches another's messages, domains or keys even with their ids in
 * the URL, and the pages' endpoints answer with the public API's queries and the admin line's use cases.
 */

let api: TestApi;
let dns: RunningDnsServer;
const zone = new MemoryZone();
let mailbox: SignInMailbox;
let projection: Awaited<ReturnType<typeof startActivityProjection>>;
let a: TestOrganization;
let b: TestOrganization;
const browsers = {} as Record<'adminA' | 'developerA' | 'viewerA' | 'adminB', ConsoleClient>;

async function signIn(org: TestOrganization, role: Role): Promise<ConsoleClient> {
  const email = `${role}-${randomUUID().slice(0, 8)}@example.net`;
  await org.service.addMember(org.organizationId, email, role);
  const seen = mailbox.countFor(email);
  const browser = new ConsoleClient(originOf(api.baseUrl));
  expect((await browser.post('/sign-in/link', { email })).status).toBe(200);
  expect((await browser.signInWith(await mailbox.tokenFor(email, seen))).status).toBe(200);
  return browser;
}

const sendAs = (org: TestOrganization, to: string) =>
  call(api.baseUrl, 'POST', '/email', {
    key: org.liveKey,
    body: { From: `app@${org.domain}`, To: to, Subject: `Hello ${to}`, TextBody: 'Hi', HtmlBody: '<p>Hi</p>' },
  });

beforeAll(async () => {
  dns = await startDnsServer({ zone });
  api = await startTestApi((deps) => ({
    console: testConsoleServices(deps, { resolveTxt: createTxtResolver({ servers: [dns.address] }) }),
  }));
  projection = await startActivityProjection(api.deps.store);
  await ensureTestSystemOrganization(api.deps);
  [a, b] = await Promise.all([createTestOrganization(api.deps), createTestOrganization(api.deps)]);
  mailbox = await openSignInMailbox(api.deps.store);
  browsers.adminA = await signIn(a, 'admin');
  browsers.developerA = await signIn(a, 'developer');
  browsers.viewerA = await signIn(a, 'viewer');
  browsers.adminB = await signIn(b, 'admin');
});
afterAll(async () => {
  await mailbox?.close();
  await projection?.stop();
  await api?.close();
  await dns?.close();
});

describe('what a role may change, refused by the server', () => {
  it('refuses a viewer every change with 403 and the domain’s words', async () => {
    const viewer = browsers.viewerA;
    const { body: keys } = await viewer.get('/keys');
    const attempts: [string, () => ReturnType<ConsoleClient['get']>, string][] = [
      ['POST /domains', () => viewer.post('/domains', { name: 'new.example.test' }), 'add domains'],
      ['POST /domains/:name/verify', () => viewer.post(`/domains/${a.domain}/verify`), 'verify domains'],
      ['DELETE /domains/:name', () => viewer.delete(`/domains/${a.domain}`), 'remove domains'],
      [
        'POST /keys',
        () => viewer.post('/keys', { name: 'k', mode: 'test', scopes: ['email:read'] }),
        'create API keys',
      ],
      ['DELETE /keys/:id', () => viewer.delete(`/keys/${keys.keys[0].id}`), 'revoke API keys'],
      ['POST /suppressions', () => viewer.post('/suppressions', { EmailAddress: 'x@example.net' }), 'add suppressions'],
      ['DELETE /suppressions/:email', () => viewer.delete('/suppressions/x@example.net'), 'remove suppressions'],
      ['POST /members', () => viewer.post('/members', { email: 'new@example.net', role: 'viewer' }), 'invite members'],
      ['PUT /members/:email', () => viewer.put('/members/x@example.net', { role: 'admin' }), 'change roles'],
      ['DELETE /members/:email', () => viewer.delete('/members/x@example.net'), 'remove members'],
    ];
    for (const [what, attempt, doing] of attempts) {
      const response = await attempt();
      expect(response.status, what).toBe(403);
      expect(response.body, what).toEqual({
        ErrorCode: 1503,
        Message: `A viewer cannot ${doing}; ask an admin of the organization`,
      });
    }
    // Nothing changed.
    expect((await browsers.adminA.get('/domains')).body.domains.map((d: { name: string }) => d.name)).toEqual([
      a.domain,
    ]);
    expect((await viewer.get('/keys')).body.keys.every((k: { revokedAt: null }) => k.revokedAt === null)).toBe(true);
  });

  it('lets a viewer read every page', async () => {
    for (const path of ['/me', '/domains', '/keys', '/messages', '/suppressions', '/members']) {
      expect((await browsers.viewerA.get(path)).status, path).toBe(200);
    }
    expect((await browsers.viewerA.get('/me')).body.can).toEqual({
      manageSuppressions: false,
      manageDomains: false,
      manageKeys: false,
      manageMembers: false,
      readAudit: false,
      issueAllScopesLiveKeys: false,
      manageTemplates: false,
      sendTestEmails: false,
      manageInbound: false,
    });
  });

  it('refuses a developer domains, and a live key with every scope, but not a smaller or a test one', async () => {
    const developer = browsers.developerA;
    expect((await developer.post('/domains', { name: 'dev.example.test' })).status).toBe(403);
    const all = await developer.post('/keys', { name: 'everything', mode: 'live', scopes: ['all'] });
    expect(all.status).toBe(403);
    expect(all.body.Message).toBe(
      'A developer cannot create a live key with every scope; ask an admin of the organization',
    );
    const fewer = await developer.post('/keys', { name: 'ci', mode: 'live', scopes: ['email:send'] });
    expect(fewer.status).toBe(200);
    expect(fewer.body).toMatchObject({ name: 'ci', mode: 'live', scopes: ['email:send'], lastUsedAt: null });
    expect(fewer.body.token).toMatch(/^sl_live_/);
    const test = await developer.post('/keys', { name: 'test all', mode: 'test', scopes: ['all'] });
    expect(test.status).toBe(200);
    expect(test.body.scopes).toEqual([...API_KEY_SCOPES]);
    expect((await developer.delete(`/keys/${fewer.body.id}`)).body.revokedAt).toEqual(expect.any(Number));
  });
});

describe('domains', () => {
  it('lets an admin add a domain, see its five records, verify it through DNS and remove it', async () => {
    const admin = browsers.adminA;
    const name = `${randomUUID().slice(0, 8)}.example.test`;
    const added = await admin.post('/domains', { name });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ name, verified: false });
    expect(added.body.dnsRecords.map((r: { purpose: string }) => r.purpose).sort()).toEqual(
      ['dkim', 'dmarc', 'mx', 'ownership', 'spf'].sort(),
    );
    expect(JSON.stringify(added.body)).not.toMatch(/PRIVATE KEY|dkimPrivateKey/);

    const early = await admin.post(`/domains/${name}/verify`);
    expect(early.status).toBe(422);
    expect(early.body.ErrorCode).toBe(1523);

    zone.publish(...added.body.dnsRecords);
    const verified = await admin.post(`/domains/${name}/verify`);
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ domain: { name, verified: true }, alreadyVerified: false });

    expect((await admin.delete(`/domains/${name}`)).status).toBe(204);
    expect((await admin.get('/domains')).body.domains.map((d: { name: string }) => d.name)).not.toContain(name);
  });

  it('answers a name that is not a domain with the rule’s words', async () => {
    const response = await browsers.adminA.post('/domains', { name: 'not a domain' });
    expect(response.status).toBe(422);
    expect(response.body.ErrorCode).toBe(1520);
  });
});

describe('one organization never reaches another’s', () => {
  it('neither its messages, in the list or by id', async () => {
    const toB = `b-${randomUUID().slice(0, 8)}@example.net`;
    const sent = await sendAs(b, toB);
    expect(sent.status).toBe(200);
    const messageId = sent.body.MessageID as string;
    // B's own member sees it (so the projection has it)…
    await eventually(async () =>
      (await browsers.adminB.get(`/messages/${messageId}`)).status === 200 ? true : undefined,
    );
    // …A's never does.
    const byId = await browsers.adminA.get(`/messages/${messageId}`);
    expect(byId.status).toBe(404);
    expect(byId.body.ErrorCode).toBe(701);
    const listed = await browsers.adminA.get(`/messages?recipient=${encodeURIComponent(toB)}`);
    expect(listed.body).toEqual({ TotalCount: 0, Messages: [] });
  });

  it('nor its domains', async () => {
    expect((await browsers.adminA.get('/domains')).body.domains.map((d: { name: string }) => d.name)).not.toContain(
      b.domain,
    );
    expect((await browsers.adminA.post(`/domains/${b.domain}/verify`)).status).toBe(404);
    expect((await browsers.adminA.delete(`/domains/${b.domain}`)).status).toBe(404);
    expect(await api.deps.accounts.domain(b.organizationId, b.domain)).toMatchObject({ verified: true });
  });

  it('nor its keys', async () => {
    const keysOfB = (await browsers.adminB.get('/keys')).body.keys as { id: string }[];
    const keysOfA = (await browsers.adminA.get('/keys')).body.keys as { id: string }[];
    expect(keysOfA.map((k) => k.id)).not.toEqual(expect.arrayContaining([keysOfB[0]!.id]));
    const revoke = await browsers.adminA.delete(`/keys/${keysOfB[0]!.id}`);
    expect(revoke.status).toBe(404);
    expect(revoke.body.ErrorCode).toBe(1535);
    expect((await call(api.baseUrl, 'GET', '/me', { key: b.liveKey })).status).toBe(200);
  });
});

describe('activity', () => {
  it('answers the public API’s search and details, for the member’s organization', async () => {
    const to = `a-${randomUUID().slice(0, 8)}@example.net`;
    const sent = await sendAs(a, to);
    const messageId = sent.body.MessageID as string;
    const details = await eventually(async () => {
      const response = await browsers.viewerA.get(`/messages/${messageId}`);
      return response.status === 200 ? response.body : undefined;
    });
    const publicDetails = await call(api.baseUrl, 'GET', `/messages/outbound/${messageId}/details`, { key: a.liveKey });
    expect(details).toEqual(publicDetails.body);
    expect(details).toMatchObject({ MessageID: messageId, HtmlBody: '<p>Hi</p>', TextBody: 'Hi' });

    const query = `?recipient=${encodeURIComponent(to)}&count=10&offset=0`;
    const listed = await browsers.viewerA.get(`/messages${query}`);
    const publicList = await call(api.baseUrl, 'GET', `/messages/outbound${query}`, { key: a.liveKey });
    expect(listed.body).toEqual(publicList.body);
    expect(listed.body.TotalCount).toBe(1);

    const bad = await browsers.viewerA.get('/messages?count=0');
    const publicBad = await call(api.baseUrl, 'GET', '/messages/outbound?count=0', { key: a.liveKey });
    expect({ status: bad.status, body: bad.body }).toEqual({ status: publicBad.status, body: publicBad.body });
  });
});

describe('API keys', () => {
  it('lists keys without a token, with when each was last used', async () => {
    const unused = await browsers.adminA.post('/keys', { name: 'unused', mode: 'test', scopes: ['email:read'] });
    expect((await sendAs(a, `used-${randomUUID().slice(0, 8)}@example.net`)).status).toBe(200);
    const listed = await eventually(async () => {
      const { body } = await browsers.adminA.get('/keys');
      const live = body.keys.find(
        (k: { mode: string; lastUsedAt: number | null }) => k.mode === 'live' && k.lastUsedAt,
      );
      return live ? body : undefined;
    });
    expect(JSON.stringify(listed)).not.toMatch(/sl_(live|test)_[A-Za-z0-9]{20,}/);
    expect(listed.keys.find((k: { id: string }) => k.id === unused.body.id).lastUsedAt).toBeNull();
  });
});
