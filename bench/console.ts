/**
 * npm run bench:console — the web console's figures on this machine (issue 13):
 * 1. the JavaScript it ships, gzipped (the build's own count; budget 250 kB);
 * 2. the first page's load until interactive, on loopback, in Debian's chromium (headless, a cold cache per load):
 *    the `console:interactive` mark (apps/console/src/interactive.ts: the sign-in form or a page's data on screen),
 *    counted from the navigation's start; for /console/sign-in, for /console/ signed out (the API is asked who is
 *    signed in, then the sign-in page shows) and for /console/ signed in (a returning member's session cookie: the
 *    overview with its chart and numbers). The signed-in member belongs to an organization made for the run.
 * 3. the activity search over 1,000,000 messages of one organization: the reader the console's and the public API's
 *    message search use (ClickHouseActivityReader.list), with each filter the Activity page offers, on a ClickHouse
 *    database of its own, seeded here and dropped at the end (never the shared one).
 * Bounded: BENCH_LOADS page loads per address (10), BENCH_SEARCHES runs per search (20), BENCH_MESSAGES (1,000,000).
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { buildApi, connectApiDependencies } from '@sendline/api';
import {
  ClickHouseActivityReader,
  createClickHouse,
  loadLocalServicesEnv,
  migrate,
  serviceAddresses,
  sqlIdentifier,
  SignInLinks,
  sqlNumber,
  sqlString,
  type ActivityFilters,
} from '@sendline/infra';
import { createTestOrganization, ensureTestSystemOrganization } from '../test/support/api';
import { BUDGET_BYTES, buildConsole, DIST, kB } from '../apps/console/scripts/build';

loadLocalServicesEnv();
const addresses = serviceAddresses();
const LOADS = Number(process.env.BENCH_LOADS ?? 10);
const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 20);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1_000_000);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(0)} ms` : 'n/a');

async function bundle() {
  const size = await buildConsole();
  console.log(
    `JavaScript shipped: ${kB(size.gzipped)} gzipped (${kB(size.raw)} raw, ${size.files} file(s)); budget ${kB(BUDGET_BYTES)}`,
  );
}

/**
 * Loads `url` LOADS times, each in a fresh browser context (nothing cached; `prepare` may give it a session), and
 * answers the interactive times.
 */
async function firstLoads(
  browser: Browser,
  url: string,
  prepare: (context: BrowserContext) => Promise<void> = async () => undefined,
): Promise<{ interactive: number[]; failures: string[] }> {
  const interactive: number[] = [];
  const failures: string[] = [];
  for (let i = 0; i < LOADS; i += 1) {
    const context = await browser.newContext();
    await prepare(context);
    const page = await context.newPage();
    try {
      await page.goto(url);
      const at = await page.waitForFunction(
        () => performance.getEntriesByName('console:interactive')[0]?.startTime,
        undefined,
        { timeout: 10_000 },
      );
      interactive.push((await at.jsonValue()) as number);
    } catch (error) {
      failures.push(`${url}: ${(error as Error).message.split('\n')[0]}`);
    } finally {
      await context.close();
    }
  }
  return { interactive, failures };
}

async function pageLoads() {
  if (!existsSync(join(DIST, 'index.html'))) await buildConsole();
  const connected = connectApiDependencies(addresses, {
    clientId: 'bench-console',
    mailHost: 'mail.sendline.test',
    development: false,
  });
  const app = await buildApi(connected.deps);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  try {
    const origin = `http://127.0.0.1:${port}`;
    // A member of an organization made for the run, signed in by a one-time token redeemed as the link's page does.
    const org = await createTestOrganization(connected.deps);
    const member = `bench-${randomUUID().slice(0, 8)}@example.net`;
    await org.service.addMember(org.organizationId, member, 'admin');
    const links = new SignInLinks(connected.deps.redis);
    const signedIn = async (context: BrowserContext) => {
      const token = await links.issue({ organizationId: org.organizationId, email: member });
      const answer = await context.request.post(`${origin}/console/api/sign-in/session`, { data: { token } });
      if (answer.status() !== 200) throw new Error(`sign-in answered ${answer.status()}: ${await answer.text()}`);
    };
    const rows = [];
    for (const [label, path, prepare] of [
      ['/console/sign-in', '/console/sign-in', undefined],
      ['/console/ signed out', '/console/', undefined],
      ['/console/ signed in (overview)', '/console/', signedIn],
    ] as const) {
      const { interactive, failures } = await firstLoads(browser, `${origin}${path}`, prepare);
      rows.push({
        page: label,
        loads: interactive.length,
        median: ms(percentile(interactive, 50)),
        p95: ms(percentile(interactive, 95)),
        worst: ms(Math.max(...interactive)),
      });
      for (const failure of new Set(failures)) console.log(`  not interactive: ${failure}`);
    }
    console.log(`\nfirst page interactive (cold cache, loopback, headless chromium, ${LOADS} loads each):`);
    console.table(rows);
    await signInAnswers(origin, connected.deps, org);
  } finally {
    await browser.close();
    await app.close();
    await connected.disconnect();
  }
}

/**
 * How long "send me a sign-in link" takes to answer for a member (a token issued and a message accepted, both after
 * the answer) and for a stranger (nothing to send): the same answer, and about the same time, so neither tells
 * who is a member. 8 of each, alternated, fresh addresses (the per-address limit is 5 per 15 minutes; the
 * per-client one, 20, allows one run per 15 minutes from this machine).
 */
async function signInAnswers(
  origin: string,
  deps: Parameters<typeof createTestOrganization>[0],
  org: Awaited<ReturnType<typeof createTestOrganization>>,
) {
  await ensureTestSystemOrganization(deps);
  const times: Record<'member' | 'stranger', number[]> = { member: [], stranger: [] };
  for (let i = 0; i < 8; i++) {
    const member = `bench-signin-${randomUUID().slice(0, 8)}@example.net`;
    await org.service.addMember(org.organizationId, member, 'viewer');
    for (const [who, email] of [
      ['member', member],
      ['stranger', `bench-stranger-${randomUUID().slice(0, 8)}@example.net`],
    ] as const) {
      const started = performance.now();
      const answer = await fetch(`${origin}/console/api/sign-in/link`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email }),
      });
      await answer.text();
      if (answer.status === 429) {
        console.log('\nsign-in link answers: rate limited (one run per 15 minutes from this machine); not measured');
        return;
      }
      if (answer.status !== 200) throw new Error(`sign-in link answered ${answer.status}`);
      times[who].push(performance.now() - started);
    }
  }
  console.log('\n"send me a sign-in link" answered (8 each, alternated):');
  console.table(
    (['member', 'stranger'] as const).map((who) => ({
      who,
      median: `${percentile(times[who], 50).toFixed(1)} ms`,
      worst: `${Math.max(...times[who]).toFixed(1)} ms`,
    })),
  );
}

/** 1,000,000 messages of one organization over the last 29 days, written by ClickHouse itself (INSERT … SELECT). */
async function seed(clickhouse: ReturnType<typeof createClickHouse>, database: string, organizationId: string) {
  const db = sqlIdentifier(database);
  await migrate(clickhouse, database);
  const now = Date.now();
  const started = performance.now();
  const batch = 250_000;
  for (let from = 0; from < MESSAGES; from += batch) {
    const count = Math.min(batch, MESSAGES - from);
    await clickhouse.command({
      query:
        `INSERT INTO ${db}.messages (organization_id, message_id, day, received_at, received_at_ms, status, phase, ` +
        `recipients, recipient_statuses, from_email, from_name, subject, tag, message_stream, to_json, cc_json, ` +
        `bcc_json, metadata_json, track_opens, track_links, updated_at_ms, version) ` +
        `SELECT ${sqlString(organizationId)}, concat('bench-', toString(n)), toDate(toDateTime(intDiv(at, 1000))), ` +
        `toDateTime(intDiv(at, 1000)), at, ` +
        `arrayElement(['Delivered', 'Delivered', 'Delivered', 'Delivered', 'Sent', 'Bounced', 'Deferred', 'Rejected'], (n % 8) + 1), ` +
        `'Sent', [concat('user', toString(n % 50000), '@example.net')], ['Delivered'], 'orders@bench.example', 'Shop', ` +
        `concat('Your order ', toString(n), ' has shipped'), ` +
        `arrayElement(['receipt', 'welcome', 'password-reset', 'digest'], (n % 4) + 1), 'outbound', ` +
        `concat('[{"email":"user', toString(n % 50000), '@example.net","name":""}]'), '[]', '[]', '{}', 0, 'None', at, 1 ` +
        `FROM (SELECT number + ${from} AS n, toUInt64(${now} - (number + ${from}) * ${Math.floor((29 * 86_400_000) / MESSAGES)}) AS at ` +
        `FROM system.numbers LIMIT ${count})`,
    });
  }
  await clickhouse.command({ query: `OPTIMIZE TABLE ${db}.messages FINAL` }).catch(() => undefined);
  // As live: the last two days' messages still change (a tenth of them here, bounced ↔ delivered), and those
  // versions are not merged yet.
  await clickhouse.command({
    query:
      `INSERT INTO ${db}.messages (organization_id, message_id, day, received_at, received_at_ms, status, phase, ` +
      `recipients, recipient_statuses, from_email, from_name, subject, tag, message_stream, to_json, cc_json, ` +
      `bcc_json, metadata_json, track_opens, track_links, updated_at_ms, version) ` +
      `SELECT organization_id, message_id, day, received_at, received_at_ms, ` +
      `if(status = 'Bounced', 'Delivered', 'Bounced'), phase, recipients, recipient_statuses, from_email, from_name, ` +
      `subject, tag, message_stream, to_json, cc_json, bcc_json, metadata_json, track_opens, track_links, ` +
      `updated_at_ms + 1, version + 1 FROM ${db}.messages ` +
      `WHERE received_at_ms >= ${sqlNumber(now - 2 * 86_400_000)} AND cityHash64(message_id) % 10 = 0`,
  });
  return (performance.now() - started) / 1000;
}

async function activitySearch() {
  const clickhouse = createClickHouse(addresses.clickhouseUrl);
  const database = `bench_console_${randomUUID().slice(0, 8)}`;
  const organizationId = randomUUID();
  try {
    const seconds = await seed(clickhouse, database, organizationId);
    console.log(`\nseeded ${MESSAGES.toLocaleString('en')} messages into ${database} in ${seconds.toFixed(1)} s`);
    const reader = new ClickHouseActivityReader(clickhouse, database, { timeoutMs: 10_000 });
    const day = (daysAgo: number) => Date.now() - daysAgo * 86_400_000;
    const searches: Array<[string, Omit<ActivityFilters, 'count' | 'offset'> & { offset?: number }]> = [
      ['no filter (the first page)', {}],
      ['recipient', { recipient: 'user4242@example.net' }],
      ['tag', { tag: 'password-reset' }],
      ['status', { status: 'bounced' }],
      ['status + tag', { status: 'bounced', tag: 'receipt' }],
      ['status sent (all past Queued)', { status: 'sent' }],
      ['status, page 101 (offset 5000)', { status: 'bounced', offset: 5000 }],
      ['subject contains', { subject: 'order 99999 ' }],
      ['from', { fromEmail: 'orders@bench.example' }],
      ['dates (one day)', { fromDate: day(10), toDate: day(9) }],
      ['tag + status + dates', { tag: 'receipt', status: 'delivered', fromDate: day(7), toDate: day(0) }],
    ];
    const rows = [];
    for (const [name, filters] of searches) {
      const times: number[] = [];
      let total = 0;
      for (let i = 0; i < SEARCHES; i += 1) {
        const started = performance.now();
        const answer = await reader.list(organizationId, { count: 50, offset: 0, ...filters });
        times.push(performance.now() - started);
        total = answer.total;
      }
      rows.push({ search: name, matches: total, median: ms(percentile(times, 50)), p95: ms(percentile(times, 95)) });
    }
    console.log(`activity search over ${MESSAGES.toLocaleString('en')} messages (50 per page, ${SEARCHES} runs each):`);
    console.table(rows);
  } finally {
    await clickhouse.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(database)}` }).catch(() => undefined);
    await clickhouse.close();
  }
}

const watchdog = setTimeout(() => {
  console.error('bench:console took over 15 minutes; stopping');
  process.exit(1);
}, 15 * 60_000);
watchdog.unref();

console.log(`bench:console — ${new Date().toISOString()}`);
await bundle();
await pageLoads();
if (process.env.BENCH_SKIP_SEARCH !== '1') await activitySearch();
