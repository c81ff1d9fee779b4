import { randomUUID } from 'node:crypto';
import type { Role } from '@sendline/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson } from '../accounts/adminCli';
import {
  createTestOrganization,
  ensureTestSystemOrganization,
  startTestApi,
  type TestApi,
  type TestOrganization,
} from '../support/api';
import { ConsoleClient, openSignInMailbox, originOf, testConsoleServices, type SignInMailbox } from './support';

/**
 * The Members and Suppressions pages (issue 13): invitations with a link by system mail, role changes that apply on
 * the member's next request, the last admin kept by the domain, and the suppression rules of the public API, each
 * organization on its own.
 */

let api: TestApi;
let mailbox: SignInMailbox;
let a: TestOrganization;
let b: TestOrganization;

const client = () => new ConsoleClient(originOf(api.baseUrl));
const uniqueAddress = (label: string) => `${label}-${randomUUID().slice(0, 8)}@example.net`;

async function signInAs(email: string): Promise<ConsoleClient> {
  const seen = mailbox.countFor(email);
  const browser = client();
  expect((await browser.post('/sign-in/link', { email })).status).toBe(200);
  expect((await browser.signInWith(await mailbox.tokenFor(email, seen))).status).toBe(200);
  return browser;
}

async function memberOf(org: TestOrganization, role: Role): Promise<{ email: string; browser: ConsoleClient }> {
  const email = uniqueAddress(role);
  await org.service.addMember(org.organizationId, email, role);
  return { email, browser: await signInAs(email) };
}

beforeAll(async () => {
  api = await startTestApi((deps) => ({ console: testConsoleServices(deps) }));
  await ensureTestSystemOrganization(api.deps);
  [a, b] = await Promise.all([createTestOrganization(api.deps), createTestOrganization(api.deps)]);
  mailbox = await openSignInMailbox(api.deps.store);
});
afterAll(async () => {
  await mailbox?.close();
  await api?.close();
});

describe('members', () => {
  it('invites a member, who gets a sign-in link at once and signs in with the role given', async () => {
    const { browser: admin, email: adminEmail } = await memberOf(a, 'admin');
    const invited = uniqueAddress('invited');
    const seen = mailbox.countFor(invited);
    const response = await admin.post('/members', { email: invited, role: 'developer' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ email: invited, role: 'developer', addedAt: expect.any(Number) });
    const token = await mailbox.tokenFor(invited, seen);
    const mail = mailbox.mails.filter((m) => m.activeRecipients.includes(invited))[seen]!;
    expect(mail.textBody).toContain(`${adminEmail} added you to the Sendline console`);
    const newcomer = client();
    expect((await newcomer.signInWith(token)).body).toMatchObject({ email: invited, role: 'developer' });
    expect((await admin.get('/members')).body.members).toContainEqual(expect.objectContaining({ email: invited }));
  });

  it('changes a role, effective on the member’s very next request', async () => {
    const { browser: admin } = await memberOf(a, 'admin');
    const { email, browser: developer } = await memberOf(a, 'developer');
    const key = { name: 'k', mode: 'test', scopes: ['email:read'] };
    expect((await developer.post('/keys', key)).status).toBe(200);
    const changed = await admin.put(`/members/${email}`, { role: 'viewer' });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ email, role: 'viewer' });
    expect((await developer.get('/me')).body.role).toBe('viewer');
    expect((await developer.post('/keys', key)).status).toBe(403);
  });

  it('keeps the last admin: neither demoted nor removed (409), until another admin exists', async () => {
    const adminEmail = uniqueAddress('sole-admin');
    const { id } = await a.service.createOrganization({ name: 'Solo', adminEmail });
    const admin = await signInAs(adminEmail);
    expect((await admin.get('/me')).body.organization.id).toBe(id);
    const LAST_ADMIN = {
      ErrorCode: 1514,
      Message:
        'The last admin of the organization can be neither removed nor demoted: make another member an admin first.',
    };
    const demoted = await admin.put(`/members/${adminEmail}`, { role: 'developer' });
    expect(demoted.status).toBe(409);
    expect(demoted.body).toEqual(LAST_ADMIN);
    const removed = await admin.delete(`/members/${adminEmail}`);
    expect(removed.status).toBe(409);
    expect(removed.body).toEqual(LAST_ADMIN);

    const second = uniqueAddress('second-admin');
    expect((await admin.post('/members', { email: second, role: 'admin' })).status).toBe(200);
    expect((await admin.put(`/members/${adminEmail}`, { role: 'viewer' })).status).toBe(200);
    expect((await admin.get('/me')).body.role).toBe('viewer');
  });

  it('never reaches another organization’s members, even by address', async () => {
    const { browser: adminA } = await memberOf(a, 'admin');
    const { email: ofB } = await memberOf(b, 'viewer');
    expect((await adminA.get('/members')).body.members.map((m: { email: string }) => m.email)).not.toContain(ofB);
    const changed = await adminA.put(`/members/${ofB}`, { role: 'admin' });
    expect(changed.status).toBe(404);
    expect(changed.body.ErrorCode).toBe(1513);
    expect((await adminA.delete(`/members/${ofB}`)).status).toBe(404);
    expect(await api.deps.accounts.member(b.organizationId, ofB)).toMatchObject({ role: 'viewer' });
  });

  it('refuses a developer every change of members', async () => {
    const { browser: developer } = await memberOf(a, 'developer');
    const response = await developer.post('/members', { email: uniqueAddress('x'), role: 'viewer' });
    expect(response.status).toBe(403);
    expect(response.body.Message).toBe('A developer cannot invite members; ask an admin of the organization');
  });

  it('gives the first admin of `admin org create` a link that signs them in', async () => {
    const adminEmail = uniqueAddress('first-admin');
    const created = await adminJson<{ id: string; signInLink: string }>([
      'org',
      'create',
      '--name',
      'Made by the admin line',
      '--admin-email',
      adminEmail,
    ]);
    expect(created.signInLink).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/console\/sign-in#token=[A-Za-z0-9_-]{43}$/);
    const token = created.signInLink.split('#token=')[1]!;
    const browser = client();
    expect((await browser.signInWith(token)).body).toMatchObject({
      email: adminEmail,
      role: 'admin',
      organization: { id: created.id },
    });
  });
});

describe('audit', () => {
  it('shows who changed what, newest first, to admins only, for their organization only', async () => {
    const { browser: admin, email: adminEmail } = await memberOf(a, 'admin');
    const invited = uniqueAddress('audited');
    expect((await admin.post('/members', { email: invited, role: 'viewer' })).status).toBe(200);
    expect((await admin.put(`/members/${invited}`, { role: 'developer' })).status).toBe(200);
    const key = await admin.post('/keys', { name: 'CI', mode: 'test', scopes: ['email:read'] });
    expect(key.status).toBe(200);

    const audit = await admin.get('/audit?count=3');
    expect(audit.status).toBe(200);
    expect(audit.body.TotalCount).toBeGreaterThanOrEqual(3);
    expect(audit.body.entries).toEqual([
      {
        at: key.body.issuedAt,
        eventId: expect.any(String),
        action: 'ApiKeyIssued',
        subject: `key 'CI' (${key.body.prefix}, test: email:read)`,
        actor: adminEmail,
      },
      expect.objectContaining({
        action: 'MemberRoleChanged',
        subject: `member ${invited}: viewer → developer`,
        actor: adminEmail,
      }),
      expect.objectContaining({ action: 'MemberAdded', subject: `member ${invited} as viewer`, actor: adminEmail }),
    ]);
    // The organization was made by the tests' own service, which names no actor (as events from before actors were
    // recorded): its first two events, decided together, are the oldest.
    const oldest = await admin.get(`/audit?count=2&offset=${audit.body.TotalCount - 2}`);
    expect(oldest.body.entries.map((e: { action: string; actor: null }) => [e.action, e.actor]).sort()).toEqual([
      ['MemberAdded', null],
      ['OrganizationCreated', null],
    ]);

    const { browser: adminB } = await memberOf(b, 'admin');
    const ofB = (await adminB.get('/audit?count=500')).body.entries as { subject: string }[];
    expect(ofB.some((entry) => entry.subject.includes(invited))).toBe(false);

    const { browser: developer } = await memberOf(a, 'developer');
    const refused = await developer.get('/audit');
    expect(refused.status).toBe(403);
    expect(refused.body.Message).toBe('A developer cannot read the audit; ask an admin of the organization');
  });

  it('names the admin command line for its changes', async () => {
    const created = await adminJson<{ id: string; signInLink: string }>([
      'org',
      'create',
      '--name',
      'Audited',
      '--admin-email',
      uniqueAddress('cli-admin'),
    ]);
    const browser = client();
    expect((await browser.signInWith(created.signInLink.split('#token=')[1]!)).status).toBe(200);
    const { body } = await browser.get('/audit');
    expect(body.entries.map((e: { action: string; actor: string }) => [e.action, e.actor]).sort()).toEqual([
      ['MemberAdded', 'admin command line'],
      ['OrganizationCreated', 'admin command line'],
    ]);
  });
});

describe('suppressions', () => {
  it('adds a manual suppression, lists it, refuses sends to it, and removes it', async () => {
    const { browser: developer } = await memberOf(a, 'developer');
    const address = uniqueAddress('suppressed');
    const added = await developer.post('/suppressions', { EmailAddress: address });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ Suppressions: [{ EmailAddress: address, Status: 'Suppressed', Message: null }] });
    const again = await developer.post('/suppressions', { EmailAddress: address });
    expect(again.body.Suppressions[0].Status).toBe('AlreadySuppressed');

    const listed = await developer.get(`/suppressions?email=${encodeURIComponent(address)}`);
    expect(listed.body.Suppressions).toEqual([
      {
        EmailAddress: address,
        SuppressionReason: 'ManualSuppression',
        Origin: 'Customer',
        CreatedAt: expect.any(String),
      },
    ]);
    expect(await api.deps.suppressions.suppressedAmong(a.organizationId, [address])).toEqual(new Set([address]));

    const removed = await developer.delete(`/suppressions/${encodeURIComponent(address)}`);
    expect(removed.body).toEqual({ Suppressions: [{ EmailAddress: address, Status: 'Deleted', Message: null }] });
    expect((await developer.get(`/suppressions?email=${encodeURIComponent(address)}`)).body.Suppressions).toEqual([]);
  });

  it('refuses an address that is not one with the rule’s words', async () => {
    const { browser: developer } = await memberOf(a, 'developer');
    const response = await developer.post('/suppressions', { EmailAddress: 'not an address' });
    expect(response.status).toBe(422);
    expect(response.body.ErrorCode).toBe(1540);
  });

  it('keeps each organization’s suppressions its own', async () => {
    const { browser: adminA } = await memberOf(a, 'admin');
    const { browser: adminB } = await memberOf(b, 'admin');
    const address = uniqueAddress('b-only');
    await adminB.post('/suppressions', { EmailAddress: address });
    expect((await adminA.get(`/suppressions?email=${encodeURIComponent(address)}`)).body.Suppressions).toEqual([]);
    await adminA.delete(`/suppressions/${encodeURIComponent(address)}`);
    expect(await api.deps.suppressions.suppressedAmong(b.organizationId, [address])).toEqual(new Set([address]));
  });
});
