import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import {
  decideMessage,
  suppressionDecider,
  suppressionForSpamComplaint,
  type MessageSpamComplaint,
  type MessageState,
  type ReturnedOutcome,
} from '@sendline/domain';
import type { StoredEvent } from '@sendline/infra';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrganization, startTestApi, type TestApi } from '../support/api';
import { call } from '../support/http';
import { eventually } from '../support/services';
import {
  deliveredSignInLink,
  onOrigin,
  screenshot,
  seriousViolations,
  signInMailsTo,
  startConsoleStack,
  type ConsoleStack,
} from './browserSupport';
import { originOf, testConsoleServices } from './support';

/**
 * The web console in a real browser (issue 13): Debian's chromium driving the built pages against the real API,
 * sender, projections and mail server (browserSupport.ts). A member signs in through the link the pipeline
 * delivered, adds and verifies a domain, creates a live key, sends with it through the public API, follows the
 * message in Activity; a hard bounce shows in Suppressions and is removed; a viewer sees no control that changes
 * anything and the server refuses them anyway; a message's HTML runs nothing and loads nothing; every page passes
 * an accessibility check and is photographed into .local/screenshots/.
 */

let stack: ConsoleStack;
let context: BrowserContext;
let page: Page;
let origin: string;
const run = randomUUID().slice(0, 8);
const admin = `console-admin-${run}@example.net`;
const domain = `console-${run}.example.test`;
let firstLink = '';
let liveKey = '';
let deliveredMessageId = '';
const reader = `reader-${run}@example.net`;

beforeAll(async () => {
  stack = await startConsoleStack();
  origin = stack.origin;
  await stack.org.service.addMember(stack.org.organizationId, admin, 'admin');
  // The member's own time zone: dates are shown in it, with UTC on hover.
  context = await stack.browser.newContext({ timezoneId: 'America/New_York', viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('pageerror', (error) => console.error(`console page error: ${error.message}`));
}, 180_000);

// A failed test leaves a picture of where the page stood, and what the page said.
afterEach(async (test) => {
  if (test.task.result?.state !== 'fail' || !page) return;
  await screenshot(page, `failed-${test.task.name.slice(0, 40).replace(/[^a-z0-9]+/gi, '-')}`).catch(() => undefined);
});

afterAll(async () => {
  await context?.close();
  await stack?.close();
});

/** Repeats `step` (a reload, a search) until `target` shows: the pipeline and the projections are asynchronous. */
async function until(target: Locator, step: () => Promise<unknown>, what: string, timeoutMs = 40_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await target.isVisible().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await step();
    await target.waitFor({ timeout: 2000 }).catch(() => undefined);
  }
}

async function openSection(target: Page, name: string): Promise<void> {
  await target.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name }).click();
}

/** Signs `email` in from the sign-in page, through the link the pipeline delivered to the test mail server. */
async function signIn(target: Page, email: string): Promise<string> {
  const seen = signInMailsTo(stack.mail, email);
  await target.goto(`${origin}/console/`);
  await target.getByLabel('Email address').fill(email);
  await target.getByRole('button', { name: 'Email me a sign-in link' }).click();
  await target.getByRole('heading', { name: 'Check your inbox' }).waitFor();
  const link = await deliveredSignInLink(stack.mail, email, seen);
  await target.goto(onOrigin(link, origin));
  await target.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  return link;
}

describe('sign-in', () => {
  it('signs a member in through the link the pipeline delivered to their mailbox', async () => {
    await page.goto(`${origin}/console/`);
    // No session: the console asks for an address.
    await page.getByLabel('Email address').waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await screenshot(page, 'sign-in');
    await page.getByLabel('Email address').fill(admin);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByRole('heading', { name: 'Check your inbox' }).waitFor();
    await screenshot(page, 'sign-in-check-your-inbox');

    firstLink = await deliveredSignInLink(stack.mail, admin);
    expect(firstLink).toMatch(/\/console\/sign-in#token=[A-Za-z0-9_-]{20,}$/);
    await page.goto(onOrigin(firstLink, origin));
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    // Signed in as that member of that organization; the token left the address bar.
    await expect(page.locator('header').innerText()).resolves.toContain(admin);
    expect(new URL(page.url()).hash).toBe('');
    expect(new URL(page.url()).pathname).toBe('/console/');
  });

  it('refuses a link a second time', async () => {
    const other = await stack.browser.newContext();
    try {
      const tab = await other.newPage();
      await tab.goto(onOrigin(firstLink, origin));
      await tab.getByRole('alert').filter({ hasText: 'expired or was already used' }).waitFor();
      await screenshot(tab, 'sign-in-link-refused');
      expect((await tab.request.get(`${origin}/console/api/me`)).status()).toBe(401);
    } finally {
      await other.close();
    }
  });

  it('refuses a link past its lifetime', async () => {
    // The same services, with links that live one second.
    let shortLived: TestApi | undefined;
    const other = await stack.browser.newContext();
    try {
      shortLived = await startTestApi((deps) => ({ console: testConsoleServices(deps, { linkTtlMs: 1000 }) }));
      const shortOrigin = originOf(shortLived.baseUrl);
      const seen = signInMailsTo(stack.mail, admin);
      const asked = await call(shortOrigin, 'POST', '/console/api/sign-in/link', { body: { email: admin } });
      expect(asked.status).toBe(200);
      const askedAt = Date.now();
      const link = await deliveredSignInLink(stack.mail, admin, seen);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, askedAt + 1500 - Date.now())));
      const tab = await other.newPage();
      await tab.goto(onOrigin(link, shortOrigin));
      await tab.getByRole('alert').filter({ hasText: 'expired or was already used' }).waitFor();
      expect((await tab.request.get(`${shortOrigin}/console/api/me`)).status()).toBe(401);
    } finally {
      await other.close();
      await shortLived?.close();
    }
  });
});

describe('setting up and sending', () => {
  it('adds a domain, shows its five records with copy buttons, and verifies it against DNS', async () => {
    await openSection(page, 'Domains');
    await page.getByRole('heading', { name: 'Domains', level: 1 }).waitFor();
    await page.getByLabel('Domain name').fill(domain);
    await page.getByRole('button', { name: 'Add domain' }).click();
    const card = page.getByRole('region', { name: domain });
    await card.waitFor();
    const rows = card.locator('table.records tbody tr');
    expect(await rows.evaluateAll((all) => all.map((row) => row.getAttribute('data-purpose')))).toEqual([
      'ownership',
      'mx',
      'spf',
      'dkim',
      'dmarc',
    ]);
    expect(await card.getByRole('button', { name: /^Copy the (name|value) of the/ }).count()).toBe(10);
    // The MX and SPF go on the return path, never on the domain itself (which would take the company's mail).
    for (const purpose of ['mx', 'spf']) {
      await expect(card.locator(`tr[data-purpose="${purpose}"]`).innerText()).resolves.toContain(`bounces.${domain}`);
    }

    // Nothing published yet: "verify now" says what it found.
    await card.getByRole('button', { name: `Verify ${domain} now` }).click();
    await card
      .getByRole('alert')
      .filter({ hasText: `_sendline.${domain}` })
      .waitFor();
    await expect(card.locator('tr[data-purpose="ownership"]').innerText()).resolves.toContain('not found');

    const listed = await page.request.get(`${origin}/console/api/domains`);
    const summary = ((await listed.json()) as any).domains.find((d: { name: string }) => d.name === domain);
    stack.zone.publish(...summary.dnsRecords);
    await card.getByRole('button', { name: `Verify ${domain} now` }).click();
    await card.getByText(`${domain} is verified`).waitFor();
    await expect(card.locator('.badge', { hasText: 'Verified' }).count()).resolves.toBeGreaterThanOrEqual(1);
    await card.getByRole('button', { name: `Verify the return path of ${domain}` }).click();
    await card.getByText(`The return path bounces.${domain} is verified`).waitFor();
    await screenshot(page, 'domains');
  });

  it('creates a live key, shown once with a copy button, and lists it by its prefix', async () => {
    await openSection(page, 'Developers › API keys');
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await page.getByLabel('Name').fill(`Console test ${run}`);
    await page.getByLabel('Mode').selectOption('live');
    await page.getByRole('checkbox', { name: /email:read/ }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    liveKey = ((await page.getByTestId('issued-token').textContent()) ?? '').trim();
    expect(liveKey).toMatch(/^sl_live_/);
    await page.getByRole('button', { name: 'Copy the new API key' }).waitFor();
    await screenshot(page, 'api-keys-created');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await expect(page.getByTestId('issued-token').count()).resolves.toBe(0);
    const row = page.getByRole('row', { name: new RegExp(`Console test ${run}`) });
    await expect(row.innerText()).resolves.toContain(liveKey.slice(0, 12));
    await expect(row.innerText()).resolves.toContain('email:send, email:read');
    // The token is nowhere on the page once dismissed.
    await expect(page.content()).resolves.not.toContain(liveKey);
  });

  it('finds a message sent with that key through the public API in Activity: Accepted → Sent → Delivered', async () => {
    const recipient = reader;
    const subject = `Console order ${run}`;
    const sent = await call(stack.api.baseUrl, 'POST', '/email', {
      key: liveKey,
      body: {
        From: `Shop <orders@${domain}>`,
        To: recipient,
        Subject: subject,
        TextBody: `Hello from the console test ${run}.`,
        HtmlBody: `<p>Hello from the console test <b>${run}</b>.</p>`,
        Tag: 'console-e2e',
        Metadata: { order: run },
      },
    });
    expect(sent.status).toBe(200);
    deliveredMessageId = sent.body.MessageID;

    await openSection(page, 'Activity');
    await page.getByLabel('Recipient').fill(recipient);
    const search = page.getByRole('button', { name: 'Search', exact: true });
    await search.click();
    const link = page.getByRole('link', { name: subject });
    await until(link, () => search.click(), 'the message in Activity');
    await screenshot(page, 'activity');
    await link.click();
    await page.getByRole('heading', { name: subject, level: 1 }).waitFor();
    const timeline = page.getByRole('list', { name: `Events for ${recipient}` });
    await until(timeline.locator('li[data-event="Delivered"]'), () => page.reload(), 'the delivery on the timeline');
    expect(await timeline.locator('li').evaluateAll((all) => all.map((li) => li.getAttribute('data-event')))).toEqual([
      'Accepted',
      'Sent',
      'Delivered',
    ]);
    // The receiving server's answer, the tag, the metadata, both bodies.
    await expect(timeline.innerText()).resolves.toMatch(/Receiving server's answer\s+250/);
    const text = await page.locator('main').innerText();
    expect(text).toContain('console-e2e');
    expect(text).toContain(run);
    expect(text).toContain(`Hello from the console test ${run}.`);
    await page.frameLocator('iframe.html-body').getByText('Hello from the console test').waitFor();
    // Dates in the member's time zone, UTC on hover.
    const received = page.locator('time').first();
    await expect(received.getAttribute('title')).resolves.toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
    await screenshot(page, 'message');
  });

  it('shows what came back about that message: an automatic reply, a spam complaint, then a DSN refusing it', async () => {
    const organizationId = stack.org.organizationId;
    // Where the message stands: delivered to its one recipient (the test above saw it).
    const state: MessageState = {
      phase: 'Sent',
      messageId: deliveredMessageId,
      organizationId,
      recipients: new Map([[reader, { status: 'Delivered', failedAttempts: 0 }]]),
      suppressedRecipients: [],
    };
    // What the returned-mail reader decides and appends (the message decider's RecordReturn).
    const decide = (outcome: ReturnedOutcome, now: number) =>
      decideMessage(
        {
          type: 'RecordReturn',
          data: { messageId: deliveredMessageId, recipient: reader, reportId: `report-${randomUUID()}`, outcome },
          metadata: { organizationId, now, eventIds: [randomUUID()] },
        },
        state,
      );
    const now = Date.now();
    const reply = decide({ kind: 'AutoReplied', summary: 'Out of office until Monday' }, now);
    const complaint = decide(
      { kind: 'SpamComplaint', feedbackType: 'abuse', userAgent: 'ExampleFBL/1.0', summary: 'Reported as spam' },
      now + 1,
    );
    const suppressed = suppressionDecider.decide(
      {
        type: 'AddSuppression',
        data: suppressionForSpamComplaint(complaint[0] as MessageSpamComplaint),
        metadata: { organizationId, now: now + 1, eventIds: [randomUUID()] },
      },
      suppressionDecider.initialState(),
    );
    const dsn = decide(
      {
        kind: 'HardBounced',
        smtpResponse: 'smtp; 550 5.1.1 mailbox disabled',
        statusCode: 550,
        enhancedStatus: '5.1.1',
        summary: 'Bad destination mailbox address',
      },
      now + 2,
    );
    await stack.api.deps.store.append([...reply, ...complaint, ...suppressed, ...dsn] as StoredEvent[]);

    await page.goto(`${origin}/console/activity/${encodeURIComponent(deliveredMessageId)}`);
    const timeline = page.getByRole('list', { name: `Events for ${reader}` });
    await until(timeline.locator('li[data-event="Bounced"]'), () => page.reload(), 'the late bounce on the timeline');
    expect(await timeline.locator('li').evaluateAll((all) => all.map((li) => li.getAttribute('data-event')))).toEqual([
      'Accepted',
      'Sent',
      'Delivered',
      'AutoResponder',
      'SpamComplaint',
      'Bounced',
    ]);
    const text = await timeline.innerText();
    expect(text).toContain('Automatic reply');
    expect(text).toContain('Spam complaint');
    expect(text).toContain('it was not delivered after all');
    expect(text).toMatch(/Receiving server's answer\s+smtp; 550 5\.1\.1/);
    await expect(page.locator('main').innerText()).resolves.toMatch(/Status\s+Bounced/);
    await screenshot(page, 'message-came-back');

    // The complaint suppressed the address: Suppressions says why.
    await openSection(page, 'Suppressions');
    await page.getByLabel('Email address').fill(reader);
    const search = page.getByRole('button', { name: 'Search', exact: true });
    await search.click();
    const row = page.getByRole('row', { name: new RegExp(reader) });
    await until(row, () => search.click(), 'the complaint in Suppressions');
    await expect(row.innerText()).resolves.toMatch(/SpamComplaint\s+Recipient/);
    await screenshot(page, 'suppressions-spam-complaint');

    // And the Overview lists both among its problems.
    await openSection(page, 'Overview');
    const problems = page.getByRole('row', { name: new RegExp(reader) });
    await until(problems.filter({ hasText: 'Spam complaint' }), () => page.reload(), 'the complaint on the Overview');
    await expect(problems.filter({ hasText: 'Hard bounce' }).count()).resolves.toBe(1);
    await screenshot(page, 'overview-came-back');
  });

  it('shows a hard bounce in Suppressions, and removes it', async () => {
    const bounced = `hardbounce-${run}@example.net`;
    // Searched before the bounce: Search pressed again, unchanged, looks again.
    await openSection(page, 'Suppressions');
    await page.getByLabel('Email address').fill(bounced);
    const search = page.getByRole('button', { name: 'Search', exact: true });
    await search.click();
    await page.getByText('No suppression matches.').waitFor();
    const sent = await call(stack.api.baseUrl, 'POST', '/email', {
      key: liveKey,
      body: { From: `orders@${domain}`, To: bounced, Subject: `Bounce ${run}`, TextBody: 'Hello' },
    });
    expect(sent.status).toBe(200);
    const row = page.getByRole('row', { name: new RegExp(bounced) });
    await until(row, () => search.click(), 'the hard bounce in Suppressions');
    await expect(row.innerText()).resolves.toContain('HardBounce');
    await screenshot(page, 'suppressions');
    await row.getByRole('button', { name: `Remove the suppression of ${bounced}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove the suppression' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${bounced} is no longer suppressed` })
      .waitFor();
    await row.waitFor({ state: 'detached' });
    const listed = await page.request.get(`${origin}/console/api/suppressions?email=${encodeURIComponent(bounced)}`);
    expect(((await listed.json()) as any).Suppressions).toEqual([]);
  });
});

describe("a message's HTML body", () => {
  let remote: Server;
  const hits: string[] = [];
  let remoteOrigin = '';

  beforeAll(async () => {
    // The "remote host" an email's images and scripts would reach: every request it gets is counted.
    remote = createServer((request, response) => {
      hits.push(request.url ?? '');
      response.writeHead(200, { 'Content-Type': 'image/gif' }).end(Buffer.from('R0lGODlhAQABAAAAACw=', 'base64'));
    });
    await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
    remoteOrigin = `http://127.0.0.1:${(remote.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => remote.close(() => resolve())));

  it('runs no script and loads nothing remote, until the member asks for remote images', async () => {
    const recipient = `html-${run}@example.net`;
    const subject = `Offer ${run}`;
    const html =
      `<html><head><link rel="stylesheet" href="${remoteOrigin}/style.css">` +
      `<meta http-equiv="refresh" content="0;url=${remoteOrigin}/refresh"></head><body>` +
      `<h1>Big offer</h1><img src="${remoteOrigin}/pixel.gif" alt="tracking pixel">` +
      `<script>fetch('${remoteOrigin}/script'); top.document.title = 'script ran';</script>` +
      `<img src="data:," onerror="fetch('${remoteOrigin}/onerror')">` +
      `<iframe src="${remoteOrigin}/frame"></iframe></body></html>`;
    // The member searches before the message exists; pressing Search again, unchanged, looks again.
    await openSection(page, 'Activity');
    await page.getByLabel('Recipient').fill(recipient);
    const search = page.getByRole('button', { name: 'Search', exact: true });
    await search.click();
    await page.getByText('No message matches these filters').waitFor();
    const sent = await call(stack.api.baseUrl, 'POST', '/email', {
      key: liveKey,
      body: { From: `orders@${domain}`, To: recipient, Subject: subject, HtmlBody: html, TextBody: 'Big offer' },
    });
    expect(sent.status).toBe(200);
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));

    const link = page.getByRole('link', { name: subject });
    await until(link, () => search.click(), 'the HTML message in Activity', 30_000);
    await link.click();
    const body = page.frameLocator('iframe.html-body');
    await body.getByRole('heading', { name: 'Big offer' }).waitFor();
    // What the frame would fetch it asks for while it parses; a second more lets any of it arrive.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const title = await page.title();
    expect(title).toBe('Sendline console');
    expect(hits).toEqual([]);
    expect(requested.filter((url) => url.startsWith(remoteOrigin))).toEqual([]);
    await screenshot(page, 'message-html-sandboxed');

    // The measure can see a request: allowed, the remote image loads — and still no script runs.
    await page.getByLabel('Load remote images').check();
    await body.getByRole('heading', { name: 'Big offer' }).waitFor();
    const deadline = Date.now() + 20_000;
    while (!hits.includes('/pixel.gif') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(hits).toContain('/pixel.gif');
    expect(hits.filter((hit) => hit !== '/pixel.gif')).toEqual([]);
    expect(await page.title()).toBe('Sendline console');
  });
});

describe('members', () => {
  it('invites a member (who gets a sign-in link), changes their role, and removes them after a confirmation', async () => {
    const invited = `console-invited-${run}@example.net`;
    await openSection(page, 'Members');
    await page.getByLabel('Invite by email').fill(invited);
    await page.getByLabel('Role', { exact: true }).selectOption('developer');
    await page.getByRole('button', { name: 'Invite' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${invited} is a developer now` })
      .waitFor();
    // The invitation is a sign-in link, through the pipeline like any other.
    expect(await deliveredSignInLink(stack.mail, invited)).toMatch(/\/console\/sign-in#token=/);

    const role = page.getByRole('combobox', { name: `Role of ${invited}` });
    await role.selectOption('viewer');
    await expect
      .poll(async () => ((await (await page.request.get(`${origin}/console/api/members`)).json()) as any).members)
      .toContainEqual(expect.objectContaining({ email: invited, role: 'viewer' }));

    // The confirmation is a modal dialog: Escape cancels it, nothing is removed.
    const remove = page.getByRole('button', { name: `Remove the member ${invited}` });
    await remove.click();
    await page.getByRole('dialog').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    await expect(page.getByRole('row', { name: new RegExp(invited) }).count()).resolves.toBe(1);
    await remove.click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove the member' }).click();
    await page.getByRole('row', { name: new RegExp(invited) }).waitFor({ state: 'detached' });
  });
});

describe('the audit', () => {
  it('shows who added the domain and created the key, newest first', async () => {
    await openSection(page, 'Audit');
    await page.getByRole('heading', { name: 'Audit', level: 1 }).waitFor();
    const domainRow = page.getByRole('row', { name: new RegExp(`DomainAdded.*${domain.replace(/\./g, '\\.')}`) });
    await domainRow.waitFor();
    await expect(domainRow.innerText()).resolves.toContain(admin);
    const keyRow = page.getByRole('row', { name: new RegExp(`ApiKeyIssued.*Console test ${run}`) });
    await expect(keyRow.innerText()).resolves.toContain(admin);
    // Newest first: the key was created after the domain was added.
    const rows = await page.locator('tbody tr').allInnerTexts();
    expect(rows.findIndex((row) => row.includes(`Console test ${run}`))).toBeLessThan(
      rows.findIndex((row) => row.includes(domain) && row.includes('DomainAdded')),
    );
  });
});

describe('another organization', () => {
  it('is out of sight: its message by its id in the address, its domain in the list', async () => {
    const other = await createTestOrganization(stack.api.deps);
    const subject = `Other organization ${run}`;
    const sent = await call(stack.api.baseUrl, 'POST', '/email', {
      key: other.liveKey,
      body: { From: `orders@${other.domain}`, To: `someone-${run}@example.net`, Subject: subject, TextBody: 'Hi' },
    });
    expect(sent.status).toBe(200);
    const theirs: string = sent.body.MessageID;
    // Their message is in the activity store (read with their key), never in ours.
    await eventually(
      async () => {
        const details = await call(stack.api.baseUrl, 'GET', `/messages/outbound/${theirs}/details`, {
          key: other.liveKey,
        });
        return details.status === 200 ? true : undefined;
      },
      30_000,
      "the other organization's message in the activity store",
    );
    await page.goto(`${origin}/console/activity/${theirs}`);
    await page
      .getByRole('alert')
      .filter({ hasText: `Message ${theirs} was not found` })
      .waitFor();
    await expect(page.locator('main').innerText()).resolves.not.toContain(subject);
    await page.goto(`${origin}/console/domains`);
    await page.getByRole('region', { name: domain }).waitFor();
    await expect(page.locator('main').innerText()).resolves.not.toContain(other.domain);
  });
});

describe('a viewer', () => {
  it('sees no control that changes anything, and the server refuses them anyway', async () => {
    const viewer = `console-viewer-${run}@example.net`;
    await stack.org.service.addMember(stack.org.organizationId, viewer, 'viewer');
    const viewerContext = await stack.browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const tab = await viewerContext.newPage();
      tab.setDefaultTimeout(20_000);
      await signIn(tab, viewer);
      await expect(tab.locator('header').innerText()).resolves.toContain('viewer');
      const nav = tab.getByRole('navigation', { name: 'Console sections' });
      expect(await nav.getByRole('link', { name: 'Audit' }).count()).toBe(0);
      const changes = /^(Add|Remove|Revoke|Create key|Invite|Verify)/;
      for (const [section, heading] of [
        ['Suppressions', 'Suppressions'],
        ['Domains', 'Domains'],
        ['Developers › API keys', 'API keys'],
        ['Members', 'Members'],
      ] as const) {
        await openSection(tab, section);
        await tab.getByRole('heading', { name: heading, level: 1 }).waitFor();
        await tab.getByText(/^Loading/).waitFor({ state: 'detached' });
        // No button that changes anything, no form to add (the search forms are role=search), no role picker.
        expect(await tab.getByRole('button', { name: changes }).count(), section).toBe(0);
        expect(await tab.getByRole('form').count(), section).toBe(0);
        expect(await tab.getByRole('combobox', { name: /^Role of/ }).count(), section).toBe(0);
        await screenshot(tab, `viewer-${heading.toLowerCase().replace(/ /g, '-')}`);
      }
      // The server's own check: the same requests the hidden controls would make.
      const me = (await (await tab.request.get(`${origin}/console/api/me`)).json()) as any;
      expect(me.role).toBe('viewer');
      const headers = { 'X-CSRF-Token': me.csrfToken };
      const refused = [
        await tab.request.post(`${origin}/console/api/keys`, {
          headers,
          data: { name: 'nope', mode: 'test', scopes: ['email:send'] },
        }),
        await tab.request.post(`${origin}/console/api/domains`, {
          headers,
          data: { name: `viewer-${run}.example.test` },
        }),
        await tab.request.post(`${origin}/console/api/suppressions`, {
          headers,
          data: { EmailAddress: 'x@example.net' },
        }),
        await tab.request.post(`${origin}/console/api/members`, {
          headers,
          data: { email: 'y@example.net', role: 'admin' },
        }),
      ];
      for (const answer of refused) {
        expect(answer.status()).toBe(403);
        expect(((await answer.json()) as any).Message).toMatch(/viewer/i);
      }
    } finally {
      await viewerContext.close();
    }
  });
});

describe('every page', () => {
  it('passes an accessibility check with no serious or critical violation, and is photographed', async () => {
    const pages: Array<[string, string, string]> = [
      ['overview', '/console/', 'Last 30 days'],
      ['activity', '/console/activity', 'Activity'],
      ['message', `/console/activity/${deliveredMessageId}`, 'Text body'],
      ['suppressions', '/console/suppressions', 'Suppressions'],
      ['domains', '/console/domains', domain],
      ['api-keys', '/console/developers/api-keys', 'Create an API key'],
      ['members', '/console/members', 'Members'],
      ['audit', '/console/audit', 'Audit'],
    ];
    const violations: string[] = [];
    for (const [name, path, heading] of pages) {
      await page.goto(`${origin}${path}`);
      await page.getByRole('heading', { name: heading }).first().waitFor();
      await page.getByText(/^Loading/).waitFor({ state: 'detached' });
      // The page shows its data, not an error.
      const alerts = await page.getByRole('alert').allInnerTexts();
      expect(alerts, name).toEqual([]);
      violations.push(...(await seriousViolations(page)).map((violation) => `${name}: ${violation}`));
      await screenshot(page, name);
    }
    // The sign-in page, and the keyboard: the first Tab reaches the skip link, which leads to the page.
    const signedOut = await stack.browser.newContext();
    try {
      const tab = await signedOut.newPage();
      await tab.goto(`${origin}/console/sign-in`);
      await tab.getByLabel('Email address').waitFor();
      violations.push(...(await seriousViolations(tab)).map((violation) => `sign-in: ${violation}`));
    } finally {
      await signedOut.close();
    }
    await page.goto(`${origin}/console/members`);
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).resolves.toBe(
      'Skip to the page',
    );
    expect(violations).toEqual([]);
  });
});
