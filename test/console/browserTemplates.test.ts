import { randomUUID } from 'node:crypto';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
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

/**
 * The console's Templates page in a real browser (issue 36), against the real API, sender and mail server
 * (browserSupport.ts): an admin creates a layout and a template in it, sees the server's own rendering of the test
 * model as they type and a syntax error at its line and character, saves a second version and reads the diff, sends
 * a test that the pipeline delivers to their own mailbox, and deletes the template; a viewer reads and previews but
 * sees no control that changes anything, and the server refuses them anyway. Screenshots: console-templates*.png.
 */

let stack: ConsoleStack;
let context: BrowserContext;
let page: Page;
let origin: string;
const run = randomUUID().slice(0, 8);
const admin = `templates-admin-${run}@example.net`;
const viewer = `templates-viewer-${run}@example.net`;
const LAYOUT_HTML = [
  '<html><head><style>.frame { border: 2px solid #1d4ed8; padding: 16px; } h1 { color: #1d4ed8; }</style></head>',
  '<body><div class="frame">{{{ @content }}}</div><p>Acme, 1 Main Street</p></body></html>',
].join('\n');
const TEMPLATE_HTML = ['<h1>Hello {{ name }}!</h1>', '<p>Your order {{ order.id }} is on its way.</p>'].join('\n');

beforeAll(async () => {
  stack = await startConsoleStack();
  origin = stack.origin;
  await stack.org.service.addMember(stack.org.organizationId, admin, 'admin');
  await stack.org.service.addMember(stack.org.organizationId, viewer, 'viewer');
  context = await stack.browser.newContext({ timezoneId: 'Europe/Paris', viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('pageerror', (error) => console.error(`console page error: ${error.message}`));
}, 180_000);

afterEach(async (test) => {
  if (test.task.result?.state !== 'fail' || !page) return;
  await screenshot(page, `templates-failed-${test.task.name.slice(0, 40).replace(/[^a-z0-9]+/gi, '-')}`).catch(
    () => undefined,
  );
});

afterAll(async () => {
  await context?.close();
  await stack?.close();
});

async function signIn(target: Page, email: string): Promise<void> {
  const seen = signInMailsTo(stack.mail, email);
  await target.goto(`${origin}/console/`);
  await target.getByLabel('Email address').fill(email);
  await target.getByRole('button', { name: 'Email me a sign-in link' }).click();
  await target.getByRole('heading', { name: 'Check your inbox' }).waitFor();
  const link = await deliveredSignInLink(stack.mail, email, seen);
  await target.goto(onOrigin(link, origin));
  await target.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
}

async function openTemplates(target: Page): Promise<void> {
  await target.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'Templates' }).click();
  await target.getByRole('heading', { name: 'Templates', level: 1 }).waitFor();
}

/** The rendered subject shown by the preview once the server has rendered the current fields. */
const renderedSubject = (target: Page) => target.locator('.rendered-subject');

describe('templates in the console', () => {
  it('creates a layout, then a template in it, previewed by the server as it is typed', async () => {
    await signIn(page, admin);
    await openTemplates(page);
    await page.getByText('No template yet').waitFor();
    await page.getByRole('link', { name: 'New template' }).click();
    await page.getByRole('heading', { name: 'New template', level: 1 }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Base layout');
    await page.getByLabel('Alias', { exact: true }).fill('base');
    await page.getByLabel('Type', { exact: true }).selectOption('Layout');
    await expect(page.getByLabel('Subject', { exact: true }).count()).resolves.toBe(0);
    await page.getByLabel('HTML body', { exact: true }).fill(LAYOUT_HTML);
    await page.getByLabel('Text body', { exact: true }).fill('{{{ @content }}}\n-- Acme');
    await page.getByText('All content is valid').waitFor();
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { name: 'Base layout', level: 1 }).waitFor();

    await page.getByRole('link', { name: '← Templates' }).click();
    await page.getByRole('link', { name: 'New template' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Order shipped');
    await page.getByLabel('Alias', { exact: true }).fill('order-shipped');
    await page.getByLabel('Layout', { exact: true }).selectOption('base');
    await page.getByLabel('Subject', { exact: true }).fill('Your order {{ order.id }} has shipped, {{ name }}');
    await page.getByLabel('HTML body', { exact: true }).fill(TEMPLATE_HTML);
    await page.getByLabel('Text body', { exact: true }).fill('Hello {{ name }}, order {{ order.id }} is on its way.');
    await page.getByLabel('Test model (JSON)').fill(JSON.stringify({ name: 'Ada <3', order: { id: 'A-17' } }, null, 2));
    // The server's renderer: the subject as it will be sent, the HTML escaped, inside the layout, its CSS inlined.
    await renderedSubject(page).filter({ hasText: 'Your order A-17 has shipped, Ada <3' }).waitFor();
    const frame = page.frameLocator('iframe[title="The rendered HTML body"]');
    await frame.getByText('Hello Ada <3!').waitFor();
    await frame.getByText('Acme, 1 Main Street').waitFor();
    await expect(frame.locator('div').first().getAttribute('style')).resolves.toContain('border');
    await expect(page.locator('pre.text-body').innerText()).resolves.toContain('-- Acme');

    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { name: 'Order shipped', level: 1 }).waitFor();
    await expect(page.locator('main').innerText()).resolves.toContain('version 1');
    // The test model stays with the template after it is saved, and the preview renders it again.
    await renderedSubject(page).filter({ hasText: 'Ada <3' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'templates-editor');
  });

  it('shows a syntax error at its line and character, from the server, with the line and a caret', async () => {
    await page
      .getByLabel('HTML body', { exact: true })
      .fill(`${TEMPLATE_HTML}\n<ul>{{#each items}}<li>{{ . }}</li></ul>`);
    const errors = page.getByRole('list', { name: 'Errors in the html body' });
    await errors.waitFor();
    const text = await errors.innerText();
    expect(text).toMatch(/Line 3, character \d+:/);
    expect(text).toContain('{{#each items}}');
    await expect(page.getByText('Some content is not valid').count()).resolves.toBe(1);
    await screenshot(page, 'templates-error');
    // Saving it is refused in the server's words (1122), the editor keeps what was typed.
    await page.getByRole('button', { name: 'Save a new version' }).click();
    await page.getByRole('alert').filter({ hasText: 'Not saved' }).waitFor();
    await expect(page.getByLabel('HTML body', { exact: true }).inputValue()).resolves.toContain('{{#each items}}');
  });

  it('saves a second version and shows what changed between the two', async () => {
    await page
      .getByLabel('HTML body', { exact: true })
      .fill(`${TEMPLATE_HTML}\n<ul>{{#each items}}<li>{{ . }}</li>{{/each}}</ul>`);
    await page.getByLabel('Subject', { exact: true }).fill('Order {{ order.id }} shipped');
    await page.getByText('All content is valid').waitFor();
    await page.getByRole('button', { name: 'Save a new version' }).click();
    await expect.poll(async () => page.locator('main').innerText(), { timeout: 20_000 }).toContain('version 2');
    const versions = page.getByRole('region', { name: 'Versions' });
    await expect.poll(async () => versions.locator('tbody tr').count(), { timeout: 20_000 }).toBe(2);
    const diff = page.getByLabel('Changes from version 1 to version 2');
    await diff.waitFor();
    await expect(diff.locator('.removed').allInnerTexts()).resolves.toContain(
      '- Your order {{ order.id }} has shipped, {{ name }}\n',
    );
    await expect(diff.locator('.added').allInnerTexts()).resolves.toEqual(
      expect.arrayContaining(['+ Order {{ order.id }} shipped\n', expect.stringContaining('{{/each}}')]),
    );
    // The public API's versions agree with the page.
    const listed = (await (
      await page.request.get(`${origin}/console/api/templates/order-shipped/versions`)
    ).json()) as {
      Versions: { Version: number }[];
    };
    expect(listed.Versions.map((v) => v.Version)).toEqual([2, 1]);
    await versions.scrollIntoViewIfNeeded();
    await screenshot(page, 'templates-versions');
  });

  it("sends a test to the member's own address, delivered by the pipeline with the rendered content", async () => {
    const sendTest = page.getByRole('form', { name: 'Send a test' });
    await expect(sendTest.getByLabel(/^From/).inputValue()).resolves.toBe(`test@${stack.org.domain}`);
    await sendTest.getByRole('button', { name: `Send a test to ${admin}` }).click();
    await sendTest
      .getByRole('status')
      .filter({ hasText: `Sent to ${admin}` })
      .waitFor();
    const delivered = await eventually(
      async () =>
        stack.mail
          .messages()
          .find((m) => m.recipients.some((to) => to.toLowerCase() === admin) && m.subject === 'Order A-17 shipped'),
      60_000,
      'the test of the template delivered to the member',
    );
    expect(delivered.raw?.toString('latin1')).toContain('A-17');
    await screenshot(page, 'templates-sent');
  });

  it('lists the standard templates and the layouts with alias, layout and last version', async () => {
    await openTemplates(page);
    const standard = page.getByRole('region', { name: 'Standard templates' });
    const layouts = page.getByRole('region', { name: 'Layouts' });
    await standard.getByRole('link', { name: 'Order shipped' }).waitFor();
    const row = await standard.locator('tbody tr').innerText();
    expect(row).toContain('order-shipped');
    expect(row).toContain('base');
    expect(row).toMatch(/\b2 · /);
    await expect(layouts.locator('tbody tr').innerText()).resolves.toContain('Base layout');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'templates');
  });

  it('lets a viewer read and preview, shows no control that changes anything, and the server refuses them', async () => {
    const viewerContext = await stack.browser.newContext({ viewport: { width: 1400, height: 900 } });
    try {
      const tab = await viewerContext.newPage();
      tab.setDefaultTimeout(20_000);
      await signIn(tab, viewer);
      await openTemplates(tab);
      await expect(tab.getByRole('link', { name: 'New template' }).count()).resolves.toBe(0);
      await tab.getByRole('link', { name: 'Order shipped' }).click();
      await tab.getByRole('heading', { name: 'Order shipped', level: 1 }).waitFor();
      await tab.getByText('does not change them').waitFor();
      await renderedSubject(tab).waitFor();
      for (const name of ['Save a new version', /^Delete/, /^Send a test/]) {
        await expect(tab.getByRole('button', { name }).count()).resolves.toBe(0);
      }
      await expect(tab.getByLabel('HTML body', { exact: true }).getAttribute('readonly')).resolves.not.toBeNull();
      await screenshot(tab, 'templates-viewer');

      const me = (await (await tab.request.get(`${origin}/console/api/me`)).json()) as { csrfToken: string };
      const headers = { 'X-CSRF-Token': me.csrfToken };
      const refused = [
        await tab.request.post(`${origin}/console/api/templates`, {
          headers,
          data: { Name: 'x', Subject: 'x', TextBody: 'x' },
        }),
        await tab.request.put(`${origin}/console/api/templates/order-shipped`, { headers, data: { Name: 'y' } }),
        await tab.request.delete(`${origin}/console/api/templates/order-shipped`, { headers }),
        await tab.request.post(`${origin}/console/api/templates/order-shipped/test`, {
          headers,
          data: { From: `test@${stack.org.domain}`, TemplateModel: {} },
        }),
      ];
      for (const answer of refused) {
        expect(answer.status()).toBe(403);
        expect(((await answer.json()) as { Message: string }).Message).toMatch(/^A viewer cannot/);
      }
    } finally {
      await viewerContext.close();
    }
  });

  it('refuses to delete a layout in use, then deletes the template after a confirmation', async () => {
    await openTemplates(page);
    await page.getByRole('link', { name: 'Base layout' }).click();
    await page.getByRole('button', { name: 'Delete the template Base layout' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete the template' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /used by|in use/i })
      .waitFor();

    await openTemplates(page);
    await page.getByRole('link', { name: 'Order shipped' }).click();
    await page.getByRole('button', { name: 'Delete the template Order shipped' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete the template' }).click();
    await page.getByRole('heading', { name: 'Templates', level: 1 }).waitFor();
    await page.getByRole('region', { name: 'Layouts' }).getByRole('link', { name: 'Base layout' }).waitFor();
    await expect(page.getByRole('link', { name: 'Order shipped' }).count()).resolves.toBe(0);
    const answer = await page.request.get(`${origin}/console/api/templates/order-shipped`);
    expect(answer.status()).toBe(422);
    expect(((await answer.json()) as { ErrorCode: number }).ErrorCode).toBe(1101);
  });
});
