import { mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startProjector, type RunningProjector } from '@sendline/projector';
import { type Sender } from '@sendline/sender';
import {
  positionNewGroup,
  AllowanceCounter,
  createClickHouse,
  createMxResolver,
  createTxtResolver,
  MemoryZone,
  secretKeyFromEnv,
  startDnsServer,
  SuppressionView,
  type ClickHouseClient,
  type ReceivedMessage,
  type RunningDnsServer,
  type TestMailServer,
  groupOf,
  topicsOf,
  type ProjectionName,
} from '@sendline/infra';
import { buildConsole, DIST } from '../../apps/console/scripts/build';
import { startMailServer, startTestSender, testSenderConfig } from '../sender/support';
import {
  createTestOrganization,
  ensureTestSystemOrganization,
  startTestApi,
  type TestApi,
  type TestOrganization,
} from '../support/api';
import { addresses, eventually, uniqueName } from '../support/services';
import { originOf, testConsoleServices } from './support';

/**
 * The console's browser tests' stack, every part real: the API (with the console's pages built by `npm run build`)
 * on loopback; the sender (in this process, delivering only the test organization's and the system organization's
 * mail, so the sign-in links go through the pipeline) to the test mail server; the activity and suppression
 * projections under fresh consumer groups (the suppressions and the allowance into a Redis namespace of the test's
 * own, which the API reads); a DNS server on loopback that the console's "verify now" asks; Debian's chromium, headless.
 */

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = join(process.cwd(), '.local', 'screenshots');

export interface ConsoleStack {
  api: TestApi;
  /** The API's origin, where the console lives under /console/. */
  origin: string;
  org: TestOrganization;
  mail: TestMailServer;
  /** The zone the loopback DNS server answers from: publish a domain's records here before "verify now". */
  zone: MemoryZone;
  browser: Browser;
  close(): Promise<void>;
}

export async function startConsoleStack(): Promise<ConsoleStack> {
  if (!existsSync(join(DIST, 'index.html'))) await buildConsole();
  const closers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch(() => undefined);
  };
  try {
    const zone = new MemoryZone();
    const dns: RunningDnsServer = await startDnsServer({ zone });
    closers.push(() => dns.close());
    const namespace = uniqueName('test-console');
    const api = await startTestApi((deps) => {
      const suppressions = new SuppressionView(deps.redis, namespace);
      const allowance = new AllowanceCounter(deps.redis, namespace);
      const withView = { ...deps, suppressions, allowance };
      return {
        suppressions,
        allowance,
        console: testConsoleServices(withView, {
          resolveTxt: createTxtResolver({ servers: [dns.address] }),
          resolveMx: createMxResolver({ servers: [dns.address] }),
        }),
      };
    });
    closers.push(() => api.close());
    const system = await ensureTestSystemOrganization(api.deps);
    const org = await createTestOrganization(api.deps);
    const mail = await startMailServer(api.deps.accounts, [
      org,
      { organizationId: system.organizationId, domain: system.domain },
    ]);
    closers.push(() => mail.stop());
    const sender: Sender = await startTestSender(
      api.deps,
      [org.organizationId, system.organizationId],
      testSenderConfig({ host: mail.host, port: mail.port }),
      secretKeyFromEnv(),
    );
    closers.push(() => sender.stop());
    const clickhouse: ClickHouseClient = createClickHouse(addresses.clickhouseUrl);
    closers.push(() => clickhouse.close());
    const groupPrefix = uniqueName('test-console-projector');
    const { store } = api.deps;
    const projections: ProjectionName[] = ['activity', 'suppressions', 'allowance'];
    for (const projection of projections) {
      await positionNewGroup(store, groupOf(projection, groupPrefix), topicsOf(projection, store.topics), 'latest');
    }
    const projector: RunningProjector = await startProjector({
      store,
      redis: api.deps.redis,
      clickhouse,
      database: addresses.clickhouseDatabase,
      groupPrefix,
      namespace,
      projections,
      retention: false,
      writer: { maxDelayMs: 100 },
    });
    closers.push(() => projector.stop());
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    closers.push(() => browser.close());
    await mkdir(SCREENSHOTS, { recursive: true });
    return { api, origin: originOf(api.baseUrl), org, mail, zone, browser, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Undoes a MIME body's quoted-printable soft line breaks and escapes (the link's `=` is written `=3D`). */
function quotedPrintable(text: string): string {
  return text
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

const LINK = /https?:\/\/[^\s"'<>]+\/console\/sign-in#token=[A-Za-z0-9_-]+/;

/** The sign-in link in a delivered mail: its text part, quoted-printable or base64 as nodemailer wrote it. */
export function signInLinkIn(message: ReceivedMessage): string | undefined {
  const raw = message.raw?.toString('latin1') ?? '';
  const plain = LINK.exec(quotedPrintable(raw))?.[0];
  if (plain) return plain;
  for (const block of raw.split(/\r?\n\r?\n/)) {
    const compact = block.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]+=*$/.test(compact) || compact.length < 16) continue;
    const found = LINK.exec(Buffer.from(compact, 'base64').toString('utf8'))?.[0];
    if (found) return found;
  }
  return undefined;
}

/** Waits for the `seen`+1-th sign-in mail the test mail server received for `email`, and answers its link. */
export async function deliveredSignInLink(mail: TestMailServer, email: string, seen = 0): Promise<string> {
  return eventually(
    async () => {
      const mails = mail
        .messages()
        .filter((message) => message.recipients.some((to) => to.toLowerCase() === email.toLowerCase()))
        .filter((message) => /sign in/i.test(message.subject ?? ''));
      const message = mails[seen];
      return message ? signInLinkIn(message) : undefined;
    },
    60_000,
    `a sign-in mail to ${email} delivered by the pipeline`,
  );
}

export function signInMailsTo(mail: TestMailServer, email: string): number {
  return mail
    .messages()
    .filter((message) => message.recipients.some((to) => to.toLowerCase() === email.toLowerCase()))
    .filter((message) => /sign in/i.test(message.subject ?? '')).length;
}

/** The same link, opened on this test's API (the link names the configured console address). */
export function onOrigin(link: string, origin: string): string {
  const url = new URL(link);
  return `${origin}${url.pathname}${url.hash}`;
}

/** Serious and critical accessibility violations of the page (the sender's HTML in its sandboxed frame left out). */
export async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).exclude('iframe.html-body').analyze();
  return result.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.impact} ${violation.id}: ${violation.help} (${violation.nodes
          .slice(0, 3)
          .map((node) => node.target.join(' '))
          .join(', ')})`,
    );
}

/**
 * The whole page as a picture: the viewport grown to the page's height first (a full-page capture leaves the
 * sandboxed message frame, drawn by another process, blank), then put back.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const viewport = page.viewportSize() ?? { width: 1280, height: 900 };
  const height = await page.evaluate(() => (globalThis as any).document.documentElement.scrollHeight as number);
  await page.setViewportSize({ width: viewport.width, height: Math.min(Math.max(height, viewport.height), 6000) });
  await new Promise((resolve) => setTimeout(resolve, 300));
  await page.screenshot({ path: join(SCREENSHOTS, `console-${name}.png`) });
  await page.setViewportSize(viewport);
}
