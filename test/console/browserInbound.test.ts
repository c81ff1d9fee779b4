/**
 * The console's Inbound page in a real browser (issue 35): Debian's chromium driving the built pages against the real
 * API, our MX, the inbound reader, the projector (inbound view) and the webhooks' caller posting to a loopback
 * receiver standing for the customer's hook. An admin copies the inbound address, sets the hook URL and adds a rule;
 * mail sent over SMTP to the address shows in the list (Postmark's filters), with its JSON as posted and the hook's
 * delivery log; a failed message is retried and a blocked one let through from the page; a viewer sees no control
 * that changes anything. Screenshots: .local/screenshots/console-inbound*.png.
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import type { SendMailOptions } from 'nodemailer';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import {
  createClickHouse,
  createMxResolver,
  MemoryZone,
  migrate,
  SignInLinks,
  startDnsServer,
  type ClickHouseClient,
  type EventStore,
  type RunningDnsServer,
} from '@sendline/infra';
import type { MxServer } from '@sendline/mx';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../apps/console/scripts/build';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { addresses, deleteTopicsAndDisconnect, eventually, freshEventStore } from '../support/services';
import { deleteTopicsUnder, type Receiver } from '../webhooks/support';
import {
  inboundApiServices,
  sendToMx as sendMail,
  startInboundPipeline,
  type InboundPipeline,
} from '../inbound/support';
import { CHROMIUM, SCREENSHOTS, screenshot, seriousViolations } from './browserSupport';
import { originOf, testConsoleServices } from './support';

const run = randomUUID().slice(0, 8);
const SENDER_DOMAIN = `${run}.sender.example`;
const BLOCKED_DOMAIN = `blocked-${run}.example`;
const OWN_DOMAIN = `reply.${run}.example`;
const MAIL_HOST = 'mx.sendline.test';
const admin = `inbound-admin-${run}@example.net`;
const viewer = `inbound-viewer-${run}@example.net`;
const subjects = {
  processed: `Re: ticket ${run}`,
  failed: `Refused ${run}`,
  blocked: `Spam ${run}`,
};

let store: EventStore;
let api: TestApi;
let org: TestOrganization;
let clickhouse: ClickHouseClient;
let mx: MxServer;
let dns: RunningDnsServer;
let zone: MemoryZone;
let pipeline: InboundPipeline;
let receiver: Receiver;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let origin: string;
let inboundAddress = '';
let processedId = '';
/** Subjects the receiver answers 403 (Postmark's "stop retrying"), until the test lets them through. */
const refused = new Set<string>([subjects.failed]);

const sendToMx = (mail: SendMailOptions) => sendMail(mx, mail);

/** Signs `email` in through the sign-in page with a link issued as the sign-in mail would carry it. */
async function signIn(target: Page, email: string): Promise<void> {
  const token = await new SignInLinks(api.deps.redis, 'sl').issue({ organizationId: org.organizationId, email });
  await target.goto(`${origin}/console/sign-in#token=${token}`);
  await target.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
}

/** Repeats `step` (a reload, a search) until `target` shows: the pipeline and the projections are asynchronous. */
async function until(target: Locator, step: () => Promise<unknown>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await target.isVisible().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await step();
    await target.waitFor({ timeout: 2000 }).catch(() => undefined);
  }
}

/** Waits until the messages' table has `count` rows with its head (the list is read again after a search). */
const rows = (count: number) =>
  eventually(async () => (await page.getByRole('row').count()) === count || undefined, 20_000, `${count} rows`);

const openInbound = (target: Page) =>
  target.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'Inbound' }).click();

async function openMessage(subject: string): Promise<void> {
  await page.goto(`${origin}/console/inbound?subject=${encodeURIComponent(subject)}`);
  const link = page.getByRole('link', { name: subject });
  await until(link, () => page.reload(), `'${subject}' in the inbound list`);
  await link.click();
  await page.getByRole('heading', { name: subject, level: 1 }).waitFor();
}

beforeAll(async () => {
  await buildConsole();
  store = await freshEventStore('test-console-inbound');
  clickhouse = createClickHouse(addresses.clickhouseUrl);
  await migrate(clickhouse, addresses.clickhouseDatabase);
  zone = new MemoryZone([{ type: 'TXT', name: SENDER_DOMAIN, value: 'v=spf1 ip4:127.0.0.1 -all' }]);
  dns = await startDnsServer({ zone });
  api = await startTestApi((deps) => ({
    store,
    console: testConsoleServices({ ...deps, store }),
    ...inboundApiServices({
      deps,
      store,
      clickhouse,
      settings: { mailHost: MAIL_HOST, resolveMx: createMxResolver({ servers: [dns.address], timeoutMs: 1000 }) },
    }),
  }));
  origin = originOf(api.baseUrl);
  org = await createTestOrganization(api.deps);
  await org.service.addMember(org.organizationId, admin, 'admin');
  await org.service.addMember(org.organizationId, viewer, 'viewer');
  pipeline = await startInboundPipeline({
    name: 'test-console-inbound',
    store,
    api,
    clickhouse,
    dnsServer: dns.address,
    accept: (organizationId) => organizationId === org.organizationId,
    answer: (received) => (refused.has(received.json.Subject as string) ? 403 : 200),
  });
  ({ mx, receiver } = pipeline);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  await mkdir(SCREENSHOTS, { recursive: true });
  context = await browser.newContext({ timezoneId: 'Europe/Paris', viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('pageerror', (error) => console.error(`console page error: ${error.message}`));
}, 240_000);

afterEach(async (test) => {
  if (test.task.result?.state !== 'fail' || !page) return;
  await screenshot(page, `inbound-failed-${test.task.name.slice(0, 40).replace(/[^a-z0-9]+/gi, '-')}`).catch(
    () => undefined,
  );
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await pipeline?.stop();
  await dns?.close();
  await clickhouse?.close();
  await api?.close();
  if (store) {
    await deleteTopicsUnder(store, store.topics.webhookCalls);
    await deleteTopicsAndDisconnect(store);
  }
});

describe('the Inbound page', () => {
  it("shows the organization's inbound address, and saves the hook URL and a rule", async () => {
    await signIn(page, admin);
    await openInbound(page);
    await page.getByRole('heading', { name: 'Inbound', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Copy the inbound address' }).waitFor();
    inboundAddress = (await page.locator('dd.copyable code').first().textContent()) ?? '';
    expect(inboundAddress).toMatch(/^[0-9a-f]{32}@inbound\.sendline\.dev$/);

    await page.getByLabel('Hook URL (where each inbound message is posted)').fill('not a url');
    await page.getByRole('button', { name: 'Save' }).click();
    // The browser's own check of type=url, or the server's words: either way nothing is saved.
    await page.getByLabel('Hook URL (where each inbound message is posted)').fill(receiver.url);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Inbound settings saved.' }).waitFor();
    expect((await api.deps.inbound.get(org.organizationId)).inboundHookUrl).toBe(receiver.url);

    await page.getByLabel('Block an address or a domain').fill('not an address');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByText('Rule not added').waitFor();
    await page.getByLabel('Block an address or a domain').fill(BLOCKED_DOMAIN);
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByRole('button', { name: `Remove the rule ${BLOCKED_DOMAIN}` }).waitFor();
    expect((await api.deps.inbound.rules(org.organizationId)).map((rule) => rule.rule)).toEqual([BLOCKED_DOMAIN]);
  });

  it('lists the mail sent over SMTP to the address, with the filters', async () => {
    const [hash, domain] = inboundAddress.split('@');
    for (const [subject, from, mailbox] of [
      [subjects.processed, `ada@${SENDER_DOMAIN}`, 'ticket-42'],
      [subjects.failed, `grace@${SENDER_DOMAIN}`, 'ticket-43'],
      [subjects.blocked, `spam@${BLOCKED_DOMAIN}`, 'promo'],
    ] as const) {
      const answer = await sendToMx({
        envelope: { from, to: [`${hash}+${mailbox}@${domain}`] },
        from: { name: from.split('@')[0]!, address: from },
        to: [`${hash}+${mailbox}@${domain}`],
        subject,
        text: `About ${subject}.\n\nOn Mon, Nov 2, 2026 at 9:00 AM Support <support@example.com> wrote:\n> Earlier.\n`,
        attachments: [{ filename: 'notes.txt', content: 'line one\n', contentType: 'text/plain' }],
      });
      expect(answer).toMatch(/^250 /);
    }
    await openInbound(page);
    const row = (subject: string) => page.getByRole('row').filter({ hasText: subject });
    await until(row(subjects.blocked), () => page.reload(), 'the three messages in the list');
    await until(
      row(subjects.processed).getByText('Processed', { exact: true }),
      () => page.reload(),
      'the first message Processed',
    );
    await until(
      row(subjects.failed).getByText('Failed', { exact: true }),
      () => page.reload(),
      'the refused message Failed',
    );
    await expect(row(subjects.blocked).getByText('Blocked', { exact: true }).isVisible()).resolves.toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'inbound');

    // Postmark's filters, kept in the address.
    await page.getByLabel('Mailbox hash').fill('ticket-42');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/mailboxhash=ticket-42/);
    await until(page.getByRole('row').nth(1).filter({ hasText: subjects.processed }), () => page.reload(), 'the hash');
    await rows(2);
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Status').selectOption('blocked');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/status=blocked/);
    await row(subjects.blocked).waitFor();
    await rows(2);
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('From', { exact: true }).fill(`grace@${SENDER_DOMAIN}`);
    await page.getByLabel('Subject').fill(run);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/fromemail=/);
    await row(subjects.failed).waitFor();
    await rows(2);
    await screenshot(page, 'inbound-filtered');
  });

  it("shows a message's JSON as posted and the hook's delivery log", async () => {
    await openMessage(subjects.processed);
    processedId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    const json = JSON.parse((await page.getByLabel('The JSON posted to the hook URL').textContent()) ?? '{}');
    const posted = receiver.calls.find((c) => c.json.Subject === subjects.processed)!.json;
    expect(json).toEqual(posted);
    expect(json).toMatchObject({ MailboxHash: 'ticket-42', StrippedTextReply: `About ${subjects.processed}.` });
    const log = page.getByRole('region', { name: 'Hook delivery log' });
    await log.getByRole('cell', { name: 'Delivered' }).waitFor();
    await log.getByRole('cell', { name: '200', exact: true }).waitFor();
    expect(await page.getByRole('button', { name: /Post this message|Let this blocked/ }).count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'inbound-message');
  });

  it('retries a failed message from the page, and it is posted', async () => {
    await openMessage(subjects.failed);
    const log = page.getByRole('region', { name: 'Hook delivery log' });
    await log.getByRole('cell', { name: '403', exact: true }).waitFor();
    await screenshot(page, 'inbound-failed');
    refused.delete(subjects.failed);
    await page.getByRole('button', { name: 'Post this message to the hook URL again' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('status').filter({ hasText: 'is being posted again' }).waitFor();
    await eventually(
      async () => receiver.calls.filter((c) => c.json.Subject === subjects.failed).length >= 2 || undefined,
      30_000,
      'the retried message posted',
    );
    await until(
      page.getByRole('main').getByText('Processed', { exact: true }),
      () => page.reload(),
      'the retried message Processed',
    );
    await log.getByRole('cell', { name: '1 (manual)' }).waitFor();
    await screenshot(page, 'inbound-retried');
  });

  it('lets a blocked message through from the page, and it is posted', async () => {
    await openMessage(subjects.blocked);
    await page.getByText(BLOCKED_DOMAIN, { exact: false }).first().waitFor();
    await page.getByText('Blocked: not posted.').waitFor();
    await screenshot(page, 'inbound-blocked');
    await page.getByRole('button', { name: 'Let this blocked message through' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Bypass' }).click();
    await eventually(
      async () => receiver.calls.find((c) => c.json.Subject === subjects.blocked),
      30_000,
      'the bypassed message posted',
    );
    await until(
      page.getByRole('main').getByText('Processed', { exact: true }),
      () => page.reload(),
      'the bypassed message Processed',
    );
  });

  it('removes the rule after a confirmation', async () => {
    await openInbound(page);
    await page.getByRole('button', { name: `Remove the rule ${BLOCKED_DOMAIN}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove the rule' }).click();
    await page.getByText('No rule: every sender').waitFor();
    expect(await api.deps.inbound.rules(org.organizationId)).toEqual([]);
  });

  it('sets an own inbound domain, shows the MX to publish, and verifies it once published; mail there arrives', async () => {
    await openInbound(page);
    await page.getByLabel('Domain', { exact: true }).fill(OWN_DOMAIN.toUpperCase());
    await page.getByRole('button', { name: 'Use this domain' }).click();
    const records = page.getByRole('table', { name: `DNS record to publish for ${OWN_DOMAIN}` });
    await records.waitFor();
    expect(await records.getByRole('row').nth(1).textContent()).toContain(`MX${OWN_DOMAIN}Copy10 ${MAIL_HOST}`);
    await page.getByText('Not verified: its mail is refused until its MX is found').waitFor();

    // Not published yet: the server's words name the record to publish, and nothing is verified.
    await page.getByRole('button', { name: 'Verify now' }).click();
    await page.getByText(`no MX record found at ${OWN_DOMAIN}; publish MX ${OWN_DOMAIN} 10 ${MAIL_HOST}`).waitFor();
    expect((await api.deps.inbound.get(org.organizationId)).inboundDomainVerified).toBe(false);
    await screenshot(page, 'inbound-own-domain');

    zone.publish({ type: 'MX', name: OWN_DOMAIN, value: MAIL_HOST, priority: 10 });
    await page.getByRole('button', { name: 'Verify now' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${OWN_DOMAIN} is verified` })
      .waitFor();
    await page.locator('.badge.good', { hasText: 'Verified' }).waitFor();
    expect((await api.deps.inbound.get(org.organizationId)).inboundDomainVerified).toBe(true);
    await screenshot(page, 'inbound-own-domain-verified');

    const subject = `To our own domain ${run}`;
    const answer = await sendToMx({
      from: `grace@${SENDER_DOMAIN}`,
      to: `support+ticket-7@${OWN_DOMAIN}`,
      subject,
      text: 'Sent to an address at the organization’s own inbound domain.',
    });
    expect(answer).toMatch(/^250 /);
    await openMessage(subject);
  });

  it('shows a viewer no control that changes anything, nor the signing secret', async () => {
    const tab = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    try {
      await signIn(tab, viewer);
      await openInbound(tab);
      await tab.getByRole('button', { name: 'Copy the inbound address' }).waitFor();
      await tab.getByText(/Your role \(viewer\) can read the inbound settings/).waitFor();
      expect(await tab.getByRole('button', { name: 'Save' }).count()).toBe(0);
      expect(await tab.getByRole('button', { name: 'Add rule' }).count()).toBe(0);
      expect(await tab.getByRole('button', { name: 'Use this domain' }).count()).toBe(0);
      expect(await tab.getByRole('button', { name: /Remove the inbound domain/ }).count()).toBe(0);
      expect(await tab.getByText('Signing secret').count()).toBe(0);
      await tab.getByRole('link', { name: subjects.failed }).click();
      await tab.getByRole('heading', { name: subjects.failed, level: 1 }).waitFor();
      expect(await tab.getByRole('button', { name: /Post this message|Let this blocked/ }).count()).toBe(0);
      await openInbound(tab);
      await tab.getByRole('link', { name: subjects.processed }).waitFor();
      await screenshot(tab, 'inbound-viewer');
      // The server refuses the viewer anyway, in the domain's words.
      const me = (await (await tab.request.get(`${origin}/console/api/me`)).json()) as { csrfToken: string };
      const refusedChange = await tab.request.put(`${origin}/console/api/inbound/server`, {
        headers: { 'X-CSRF-Token': me.csrfToken },
        data: { InboundHookUrl: 'https://example.com/elsewhere' },
      });
      expect(refusedChange.status()).toBe(403);
      expect(((await refusedChange.json()) as { Message: string }).Message).toBe(
        'A viewer cannot change the inbound settings; ask an admin of the organization',
      );
      const refusedRule = await tab.request.post(`${origin}/console/api/inbound/rules`, {
        headers: { 'X-CSRF-Token': me.csrfToken },
        data: { Rule: 'example.org' },
      });
      expect(refusedRule.status()).toBe(403);
      expect((await api.deps.inbound.get(org.organizationId)).inboundHookUrl).toBe(receiver.url);
    } finally {
      await tab.context().close();
    }
  });

  it("keeps another organization's member out: the message by its id is not found, their list is empty", async () => {
    const other = await createTestOrganization(api.deps);
    const stranger = `inbound-stranger-${run}@example.net`;
    await other.service.addMember(other.organizationId, stranger, 'admin');
    const tab = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    try {
      const token = await new SignInLinks(api.deps.redis, 'sl').issue({
        organizationId: other.organizationId,
        email: stranger,
      });
      await tab.goto(`${origin}/console/sign-in#token=${token}`);
      await tab.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
      await tab.goto(`${origin}/console/inbound/${processedId}`);
      await tab.getByText(`Inbound message ${processedId} was not found.`).waitFor();
      await screenshot(tab, 'inbound-not-found');
      await openInbound(tab);
      await tab.getByText('No inbound message in the last 30 days.').waitFor();
      const me = (await (await tab.request.get(`${origin}/console/api/me`)).json()) as { csrfToken: string };
      const retry = await tab.request.put(`${origin}/console/api/inbound/messages/${processedId}/retry`, {
        headers: { 'X-CSRF-Token': me.csrfToken },
      });
      expect(retry.status()).toBe(404);
    } finally {
      await tab.context().close();
    }
  });
});
