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
 * The sender killed (SIGKILL) once in the middle of bench:e2e's 300/s phase — 3,000 messages, 300 a second for
 * ten seconds, a message in flight at every moment — then started again at once on the same consumer groups
 * (docs/sender.md: it resumes from its committed offsets, its ledger keeps it from sending twice). Counted at the test
 * mail server, by Message-ID: no message lost, and no message delivered twice except the ones SMTP itself cannot tell
 * (the server took the final dot and its 250 went out after the kill, RFC 1047's lost reply) or whose 250 came within
 * the guard window before the kill (docs/sender.md, "The window, measured"). Each message has one MessageSent and both
 * its recipients' Delivered.
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

/** The sender as its own process (test/sender/fixtures/senderProcess.ts), resolved once it prints `ready`. */
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

beforeAll(async () => {
  api = await startTestApi();
  org = await createTestOrganization(api.deps);
  const mine = new Set([org.organizationId]);
  mail = await startMailServer(api.deps.accounts, [org], {
    keepRaw: false,
    maxKept: 0,
    // As bench:e2e's mail server: a signature checked on every 10th message (the receiving side is not measured).
    verifyDkim: 10,
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

describe('the sender killed in the middle of 300 messages a second', () => {
  it('loses nothing and delivers nothing twice that a server had not answered at the kill', async () => {
    const first = await startSender();
    const run = randomUUID().slice(0, 8);
    const rate = 300;
    const count = 3000;
    const perRequest = 10;
    // Open loop, as bench:e2e: requests of 10 messages leave on schedule (300 messages/s) whatever the answers do.
    const messageIds: string[] = [];
    const kill = { at: NaN, receivedBefore: 0 };
    let refused = 0;
    const started = Date.now();
    const requests: Promise<void>[] = [];
    for (let start = 0; start < count; start += perRequest) {
      await sleep(Math.max(0, started + (start / rate) * 1000 - Date.now()));
      const batch = Array.from({ length: perRequest }, (_, k) => ({
        From: `orders@${org.domain}`,
        To: `a${start + k}-${run}@example.net, b${start + k}-${run}@example.net`,
        Subject: `Order ${start + k}`,
        TextBody: `Order ${start + k}: ${'thank you for your order. '.repeat(8)}`,
      }));
      requests.push(
        call(api.baseUrl, 'POST', '/email/batch', { key: org.liveKey, body: batch }).then((response) => {
          if (response.status !== 200) refused++;
          for (const result of response.body ?? []) if (result.MessageID) messageIds.push(result.MessageID);
        }),
      );
      if (start === count / 2) {
        // Half the load sent: kill the sender with its transactions in flight, and start it again at once.
        requests.push(
          (async () => {
            const killedAt = preciseNow();
            first.kill('SIGKILL');
            await new Promise((resolve) => first.once('exit', resolve));
            kill.at = killedAt;
            kill.receivedBefore = mail.received;
            await startSender();
          })(),
        );
      }
    }
    await Promise.all(requests);
    expect(refused).toBe(0);
    expect(messageIds).toHaveLength(count);

    await eventually(
      async () => {
        const delivered = new Set(tap.events((e) => e.type === 'MessageDelivered').map((e) => dataOf(e).messageId));
        return messageIds.every((id) => delivered.has(id)) ? true : undefined;
      },
      180_000,
      'every message to be delivered',
    );

    // Lost: none. Every message reached the server, and each of its recipients has its Delivered event.
    const lost = messageIds.filter((id) => answered.recipientsAnswered(id) < 2);
    const delivered = new Map<string, Set<string>>();
    for (const event of tap.events((e) => e.type === 'MessageDelivered')) {
      const id = dataOf(event).messageId as string;
      delivered.set(id, (delivered.get(id) ?? new Set()).add(dataOf(event).recipient as string));
    }
    const incomplete = messageIds.filter((id) => delivered.get(id)?.size !== 2);

    // Delivered twice: each recipient's copy after the first, told apart by when the server answered the first copy.
    const twice = answered.copiedTwice(kill.at);
    const lostReplies = twice.filter((copy) => copy.beforeKillMs < 0);
    const insideGuardWindow = twice.filter((copy) => copy.beforeKillMs >= 0 && copy.beforeKillMs <= GUARD_WINDOW_MS);
    const unexplained = twice.filter((copy) => copy.copies > 2 || copy.beforeKillMs > GUARD_WINDOW_MS);

    // One Sent per message (one attempt each), however often its handling ran: one event id.
    const sentIds = new Map<string, Set<string>>();
    for (const event of tap.allEvents((e) => e.type === 'MessageSent')) {
      const id = dataOf(event).messageId as string;
      sentIds.set(id, (sentIds.get(id) ?? new Set()).add(event.metadata.eventId));
    }

    console.log(
      'chaos sender at 300/s:',
      JSON.stringify({
        messages: count,
        sentFor: `${((Date.now() - started) / 1000).toFixed(1)} s to the last delivery`,
        receivedBeforeKill: kill.receivedBefore,
        receivedAtTheServer: mail.received,
        lost: lost.length,
        deliveredTwice: twice.length,
        lostRepliesMsAfterKill: lostReplies.map((copy) => Math.round(-copy.beforeKillMs * 10) / 10),
        insideGuardWindowMsBeforeKill: insideGuardWindow.map((copy) => Math.round(copy.beforeKillMs * 10) / 10),
        deliveredTwiceUnexplained: unexplained.length,
        sentEventsPerMessage: Math.max(...[...sentIds.values()].map((ids) => ids.size)),
      }),
    );
    expect(lost).toEqual([]);
    expect(incomplete).toEqual([]);
    expect(unexplained).toEqual([]);
    // One transaction per recipient (two per message), and one more for each copy after the first.
    expect(mail.received).toBe(2 * count + twice.length);
    for (const id of messageIds) expect(sentIds.get(id)?.size, id).toBe(1);
  });
});
