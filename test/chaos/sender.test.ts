import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { TestMailServer } from '@sendline/infra';
import type { SenderConfig } from '@sendline/sender';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { call } from '../support/http';
import { eventually } from '../support/services';
import { dataOf, EventTap, startMailServer, testSenderConfig } from '../sender/support';
import { AnsweredCopies, GUARD_WINDOW_MS, sleep } from './harness';

/**
 * The sender killed (SIGKILL) in the middle of a stream of 300 messages, then started again on the same
 * consumer groups. Nothing is lost; a message reaches its recipient's server twice only when the server's
 * 250 for its first copy was answered within the guard window (docs/sender.md) before the kill, or
 * after it (the server had the final dot, the sender never read the reply) — the guard is written at each
 * transaction's 250, not with its batch; every message has one MessageSent.
 *
 * It also measures the window itself on every transaction of the run: from the moment the mail server
 * answered 250 (its clock) to the moment Redis applied the guard (Redis's clock, kept in the ledger). Both
 * clocks are this machine's.
 */

let api: TestApi;
let org: TestOrganization;
let mail: TestMailServer;
let tap: EventTap;
let config: SenderConfig;
const children: ChildProcess[] = [];
/** When the mail server answered 250 to each copy of each message's recipient. */
const answered = new AnsweredCopies();
const preciseNow = () => performance.timeOrigin + performance.now();

function startSender(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/sender/fixtures/senderProcess.ts'], {
    env: { ...process.env, SENDER_FIXTURE: JSON.stringify({ config, organizations: [org.organizationId] }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the sender process did not start')), 60_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'ready') {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('exit', (code) => reject(new Error(`the sender process exited with ${code}`)));
  });
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const round = (ms: number) => Math.round(ms * 100) / 100;

beforeAll(async () => {
  api = await startTestApi();
  org = await createTestOrganization(api.deps);
  const mine = new Set([org.organizationId]);
  mail = await startMailServer(api.deps.accounts, [org], {
    keepRaw: false,
    // onMessage runs right before the server answers 250 to the final dot.
    onMessage: (message) => answered.record(message, preciseNow()),
  });
  tap = await EventTap.start(api.deps.store, [api.deps.store.topics.messages], () => mine);
  // The sender's own defaults (chunks of 500, 200 transactions in flight, 10 connections), its groups fresh.
  config = testSenderConfig({ host: mail.host, port: mail.port }, { sessionTimeoutMs: 6000 });
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await tap?.stop();
  await mail?.stop();
  await api?.close();
});

describe('the sender killed mid-stream', () => {
  it('loses nothing, re-sends only inside the guard window, and records one Sent per message', async () => {
    const first = await startSender();
    const run = randomUUID().slice(0, 8);
    const count = 300;
    // 300 messages in batches of 10 every 100 ms (100 messages/s), two recipients each on one domain.
    const messageIds: string[] = [];
    const sending = (async () => {
      for (let start = 0; start < count; start += 10) {
        const started = Date.now();
        const batch = Array.from({ length: 10 }, (_, k) => ({
          From: `orders@${org.domain}`,
          To: `a${start + k}-${run}@example.net, b${start + k}-${run}@example.net`,
          Subject: `Order ${start + k}`,
          TextBody: `Order ${start + k}`,
        }));
        const response = await call(api.baseUrl, 'POST', '/email/batch', { key: org.liveKey, body: batch });
        expect(response.status).toBe(200);
        for (const result of response.body) messageIds.push(result.MessageID);
        await sleep(Math.max(0, 100 - (Date.now() - started)));
      }
    })();

    // Kill once about a third of the stream has reached the mail server: transactions are in flight.
    // Two transactions per message (one per recipient): a third of the stream is 2 * count / 3 of them.
    await eventually(async () => (mail.received >= (2 * count) / 3 ? true : undefined), 60_000, 'a third delivered');
    const killedAt = preciseNow();
    first.kill('SIGKILL');
    await exited(first);
    const receivedBeforeKill = mail.received;
    await sending;
    await startSender();

    await eventually(
      async () => {
        const delivered = new Set(tap.events((e) => e.type === 'MessageDelivered').map((e) => dataOf(e).messageId));
        return messageIds.every((id) => delivered.has(id)) ? true : undefined;
      },
      120_000,
      'every message to be delivered',
    );

    // Lost: none. Every message reached the server, and each of its recipients has its Delivered event.
    const lost = messageIds.filter((id) => answered.recipientsAnswered(id) < 2);
    expect(lost).toEqual([]);
    for (const id of messageIds) {
      const recipients = new Set(
        tap.events((e) => e.type === 'MessageDelivered' && dataOf(e).messageId === id).map((e) => dataOf(e).recipient),
      );
      expect(recipients.size, id).toBe(2);
    }

    // Re-sent: only recipients whose first copy was answered 250 within the window before the kill.
    const resent = answered.copiedTwice(killedAt).map((copy) => ({ ...copy, beforeKillMs: round(copy.beforeKillMs) }));

    // One Sent per message (one attempt each), however often its handling ran: one event id, shown once.
    const sentIds = new Map<string, Set<string>>();
    for (const event of tap.allEvents((e) => e.type === 'MessageSent')) {
      const id = dataOf(event).messageId as string;
      sentIds.set(id, (sentIds.get(id) ?? new Set()).add(event.metadata.eventId));
    }
    const sentAppendedTwice = tap.allEvents((e) => e.type === 'MessageSent').length - sentIds.size;

    // The window on every transaction of the run: the server's 250 → Redis applied the guard.
    const windows: number[] = [];
    const pipeline = api.deps.redis.pipeline();
    for (const id of messageIds) pipeline.hgetall(`sl:sender:${config.groupId}:message:${id}`);
    const ledgers = ((await pipeline.exec()) ?? []).map(([, hash]) => hash as Record<string, string>);
    messageIds.forEach((id, i) => {
      // One guard per recipient (field r:<recipient>), written at its own transaction's 250; the first copy's 250 is
      // the one it guards, unless the first copy's guard was lost with the kill (then the re-sent copy's).
      for (const [field, value] of Object.entries(ledgers[i] ?? {})) {
        if (!field.startsWith('r:')) continue;
        const entry = JSON.parse(value) as { at?: number; guardedAt?: number };
        const guardedAt = entry.guardedAt ?? entry.at;
        const answers = answered.of(id, field.slice(2));
        if (typeof guardedAt === 'number' && answers.length > 0) windows.push(guardedAt - answers[answers.length - 1]!);
      }
    });
    windows.sort((a, b) => a - b);

    console.log(
      'chaos sender:',
      JSON.stringify({
        messages: count,
        receivedBeforeKill,
        lost: lost.length,
        resent: resent.length,
        // First copies answered 250 before the kill whose guard was not in Redis yet: the guard window.
        resentInsideGuardWindowMsBeforeKill: resent.filter((r) => r.beforeKillMs >= 0).map((r) => r.beforeKillMs),
        // First copies whose 250 the server sent only after the kill (it had the final dot, the sender was gone):
        // SMTP's lost reply (RFC 1047), which no guard can cover.
        resentLostReplyMsAfterKill: resent.filter((r) => r.beforeKillMs < 0).map((r) => -r.beforeKillMs),
        sentEventsPerMessage: Math.max(...[...sentIds.values()].map((ids) => ids.size)),
        sentAppendedTwice,
        guardWindowMs: {
          transactions: windows.length,
          p50: round(percentile(windows, 50)),
          p90: round(percentile(windows, 90)),
          p99: round(percentile(windows, 99)),
          max: round(windows.at(-1) ?? NaN),
        },
      }),
    );
    for (const copy of resent) {
      expect(copy.copies, copy.id).toBe(2);
      expect(copy.beforeKillMs, copy.id).toBeLessThanOrEqual(GUARD_WINDOW_MS);
    }
    for (const [id, ids] of sentIds) expect(ids.size, id).toBe(1);
    expect(sentIds.size).toBe(count);
    // A guard per recipient: two per message.
    expect(windows.length).toBe(2 * count);
  });
});
