import { randomUUID } from 'node:crypto';
import { SIGN_IN_SUBJECT } from '@sendline/application';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestOrganization,
  ensureTestSystemOrganization,
  startTestApi,
  type TestApi,
  type TestOrganization,
} from '../support/api';
import { call } from '../support/http';
import { ConsoleClient, openSignInMailbox, originOf, testConsoleServices, type SignInMailbox } from './support';

/**
 * The console's sign-in (issue 13): a one-time link sent through our own sending pipeline as system mail, read here
 * from the MessageAccepted the pipeline appended (what the sender delivers); sessions in a cookie; CSRF on changes.
 */

let api: TestApi;
/** The same services with links and sessions that expire in moments. */
let shortLived: TestApi;
/** The same services with tight rate limits. */
let limited: TestApi;
let org: TestOrganization;
let mailbox: SignInMailbox;
let member: string;

const NO_ENUMERATION = { Message: 'If this address belongs to a member, a sign-in link is on its way.' };

beforeAll(async () => {
  api = await startTestApi((deps) => ({ console: testConsoleServices(deps) }));
  shortLived = await startTestApi((deps) => ({
    console: testConsoleServices(deps, {
      linkTtlMs: 1000,
      session: { idleMs: 1000, absoluteMs: 60_000 },
    }),
  }));
  limited = await startTestApi((deps) => ({
    console: testConsoleServices(deps, {
      limits: { perAddress: { limit: 2, windowMs: 60_000 }, perClient: { limit: 3, windowMs: 60_000 } },
    }),
  }));
  await ensureTestSystemOrganization(api.deps);
  org = await createTestOrganization(api.deps);
  member = `dev-${randomUUID().slice(0, 8)}@example.net`;
  await org.service.addMember(org.organizationId, member, 'developer');
  mailbox = await openSignInMailbox(api.deps.store);
});
afterAll(async () => {
  await mailbox?.close();
  await api?.close();
  await shortLived?.close();
  await limited?.close();
});

const client = (target = api) => new ConsoleClient(originOf(target.baseUrl));

/** A new member of the organization (each sign-in its own address: an address may ask for 5 links per 15 min). */
async function newMember(role: 'admin' | 'developer' | 'viewer' = 'developer'): Promise<string> {
  const email = `member-${randomUUID().slice(0, 8)}@example.net`;
  await org.service.addMember(org.organizationId, email, role);
  return email;
}

/** Asks for a link for `email` and returns its token, read from the pipeline's MessageAccepted. */
async function linkToken(email: string, target = api): Promise<string> {
  const seen = mailbox.countFor(email);
  const asked = await client(target).post('/sign-in/link', { email });
  expect(asked.status).toBe(200);
  return mailbox.tokenFor(email, seen);
}

describe('POST /console/api/sign-in/link', () => {
  it('sends a member a one-time link through the sending pipeline, from the system sender', async () => {
    const seen = mailbox.countFor(member);
    const response = await client().post('/sign-in/link', { email: member.toUpperCase() });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(NO_ENUMERATION);
    const token = await mailbox.tokenFor(member, seen);
    const mail = mailbox.mails.filter((m) => m.activeRecipients.includes(member))[seen]!;
    expect(mail.from.email).toBe('no-reply@system.sendline.test');
    expect(mail.subject).toBe(SIGN_IN_SUBJECT);
    expect(mail.textBody).toContain(`\nhttp://127.0.0.1:3000/console/sign-in#token=${token}\n`);

    const browser = client();
    const signedIn = await browser.signInWith(token);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toMatchObject({
      email: member,
      role: 'developer',
      organization: { id: org.organizationId },
      can: { manageKeys: true, manageDomains: false, manageMembers: false, readAudit: false },
    });
    expect(signedIn.body.csrfToken).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const me = await browser.get('/me');
    expect(me.status).toBe(200);
    expect(me.body.email).toBe(member);
  });

  it('answers a stranger exactly as a member, and sends them nothing', async () => {
    const stranger = `nobody-${randomUUID().slice(0, 8)}@example.net`;
    const strangerAnswer = await client().post('/sign-in/link', { email: stranger });
    const seen = mailbox.countFor(member);
    const memberAnswer = await client().post('/sign-in/link', { email: member });
    expect(strangerAnswer.status).toBe(memberAnswer.status);
    expect(strangerAnswer.body).toEqual(memberAnswer.body);
    // The member's mail, asked for after the stranger's request, has come through: the stranger's never will.
    await mailbox.tokenFor(member, seen);
    expect(mailbox.countFor(stranger)).toBe(0);
  });

  it('refuses a body that is not an email address with a catalogue error', async () => {
    const response = await client().post('/sign-in/link', { email: 'not an address' });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ ErrorCode: 1510 });
    expect(typeof response.body.Message).toBe('string');
  });

  it('answers 429 past the limit per address, then past the limit per client', async () => {
    const address = `limited-${randomUUID().slice(0, 8)}@example.net`;
    const browser = client(limited);
    expect((await browser.post('/sign-in/link', { email: address })).status).toBe(200);
    expect((await browser.post('/sign-in/link', { email: address })).status).toBe(200);
    const refused = await browser.post('/sign-in/link', { email: address });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ ErrorCode: 429 });
    expect(refused.body.Message).toMatch(/^Rate limit exceeded\. Retry after \d+ seconds\.$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Three requests from this client so far: a fourth, for any address, is over the client's limit.
    const other = await browser.post('/sign-in/link', { email: `other-${randomUUID().slice(0, 8)}@example.net` });
    expect(other.status).toBe(429);
  });
});

describe('POST /console/api/sign-in/session', () => {
  const EXPIRED = {
    ErrorCode: 1502,
    Message: 'This sign-in link has expired or was already used. Ask for a new one.',
  };

  it('refuses a link used once already', async () => {
    const token = await linkToken(await newMember());
    expect((await client().signInWith(token)).status).toBe(200);
    const again = await client().signInWith(token);
    expect(again.status).toBe(401);
    expect(again.body).toEqual(EXPIRED);
    expect(again.headers.get('set-cookie')).toBeNull();
  });

  it('refuses a link past its lifetime', async () => {
    const token = await linkToken(await newMember(), shortLived);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const late = await client(shortLived).signInWith(token);
    expect(late.status).toBe(401);
    expect(late.body).toEqual(EXPIRED);
  });

  it('refuses a token that was never issued', async () => {
    const response = await client().signInWith('x'.repeat(43));
    expect(response).toMatchObject({ status: 401, body: EXPIRED });
  });
});

describe('the session', () => {
  async function signedIn(target = api): Promise<ConsoleClient> {
    const token = await linkToken(await newMember(), target);
    const browser = client(target);
    const response = await browser.signInWith(token);
    expect(response.status).toBe(200);
    return browser;
  }

  it('is a random id in an HttpOnly, SameSite=Lax cookie for /console, not Secure over plain http', async () => {
    const browser = await signedIn();
    const cookie = browser.lastSetCookie!;
    expect(cookie).toMatch(/^sendline_console=[A-Za-z0-9_-]{43}; /);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).toContain('Path=/console');
    expect(cookie).not.toContain('Secure');
  });

  it('is required: without it, or with an unknown one, every endpoint answers 401', async () => {
    for (const cookie of [undefined, 'sendline_console=unknown-session-id-0123456789abcdef']) {
      const response = await call(originOf(api.baseUrl), 'GET', '/console/api/me', {
        headers: cookie ? { Cookie: cookie } : {},
      });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ ErrorCode: 1500, Message: 'Sign in to the console' });
    }
  });

  it('ends on sign-out: the cookie is cleared and the session answers 401 after', async () => {
    const browser = await signedIn();
    const cookie = browser.cookie;
    const out = await browser.post('/sign-out');
    expect(out.status).toBe(204);
    expect(browser.lastSetCookie).toMatch(/^sendline_console=;/);
    const after = await call(originOf(api.baseUrl), 'GET', '/console/api/me', { headers: { Cookie: cookie! } });
    expect(after.status).toBe(401);
  });

  it('ends after its idle time', async () => {
    const browser = await signedIn(shortLived);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await browser.get('/me')).status).toBe(401);
  });

  it('ends when the member is removed, on their very next request', async () => {
    const leaving = await newMember('viewer');
    const browser = client();
    expect((await browser.signInWith(await linkToken(leaving))).status).toBe(200);
    expect((await browser.get('/me')).status).toBe(200);
    await org.service.removeMember(org.organizationId, leaving);
    expect((await browser.get('/me')).status).toBe(401);
  });

  it('refuses a change without the CSRF header, or with another session’s, with 403', async () => {
    const browser = await signedIn();
    const other = await signedIn();
    for (const header of [undefined, other.csrfToken!]) {
      browser.csrfToken = header;
      const response = await browser.post('/keys', { name: 'x', mode: 'test', scopes: ['email:read'] });
      expect(response.status).toBe(403);
      expect(response.body).toEqual({
        ErrorCode: 1501,
        Message: 'Missing or wrong X-CSRF-Token header: reload the page',
      });
    }
    expect((await other.post('/keys', { name: 'x', mode: 'test', scopes: ['email:read'] })).status).toBe(200);
  });
});
