import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { SenderConfig } from '@sendline/sender';
import type { TestMailServer } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApi, TestOrganization } from '../support/api';
import { call } from '../support/http';
import { eventually } from '../support/services';
import { dataOf, EventTap, testSenderConfig, startSenderStage, type SenderStage } from './support';

/**
 * At least once, not twice: a sender process killed (SIGKILL) in the middle of its work, then started
 * again on the same consumer groups, delivers every message, and no recipient's server receives a
 * message twice. Every message goes to two domains; the mail server holds its answer to RCPT TO for the
 * second domain, so the kill lands while transactions are in flight and the first domain's recipients
 * have had their 250 without their outcomes appended (only the delivery ledger's guard knows them).
 */

let api: TestApi;
let org: TestOrganization;
let mail: TestMailServer;
let tap: EventTap;
let stage: SenderStage;
let config: SenderConfig;
const children: ChildProcess[] = [];

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
  new Promise<number | null>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once('exit', resolve),
  );

beforeAll(async () => {
  stage = await startSenderStage();
  ({ api, org, mail, tap } = stage);
  config = testSenderConfig(
    { host: mail.host, port: mail.port },
    {
      sessionTimeoutMs: 6000,
      concurrency: 8,
      poolSize: 4,
      chunkSize: 10,
      retryPolicy: { initialDelayMs: 300, multiplier: 2, maxDelayMs: 1000, giveUpAfterMs: 120_000, jitter: 0 },
    },
  );
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await stage?.close();
});

describe('a sender killed in the middle of its work and started again', () => {
  it('delivers every message to every recipient exactly once', async () => {
    const first = await startSender();
    const run = randomUUID().slice(0, 8);
    const messages = Array.from({ length: 40 }, (_, i) => {
      const to = [`r${i}-${run}@one.example.net`, `r${i}-${run}@two.example.net`];
      if (i % 8 === 0) to.push(`defer1+r${i}-${run}@three.example.net`);
      return { From: `orders@${org.domain}`, To: to.join(', '), Subject: `Order ${i}`, TextBody: `Order ${i}` };
    });
    const recipients = messages.flatMap((m) => (m.To as string).split(', '));
    mail.hold((address) => address.endsWith('@two.example.net'));
    const response = await call(api.baseUrl, 'POST', '/email/batch', { key: org.liveKey, body: messages });
    expect(response.status).toBe(200);
    expect(response.body.every((r: any) => r.ErrorCode === 0)).toBe(true);

    // Wait for the sender to be stuck at the held RCPT TO with nothing half-received and no delivery
    // since the last look, give the guards of what was accepted a second to reach Redis, then kill it.
    let last = -1;
    await eventually(
      async () => {
        const now = mail.received;
        const settled = mail.heldCount > 0 && mail.receiving === 0 && now === last && now > 0;
        last = now;
        return settled ? true : undefined;
      },
      30_000,
      'the sender to be stuck at the held RCPT TO',
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const deliveredBeforeKill = [...mail.deliveryCounts().keys()];
    first.kill('SIGKILL');
    await exited(first);
    // Delivered events this test's sender recorded (the answer it got names this server's queue id).
    const queueIds = new Set(mail.messages().map((m) => m.id));
    const recordedBeforeKill = new Set(
      tap
        .events(
          (e) => e.type === 'MessageDelivered' && queueIds.has(String(dataOf(e).smtpResponse).split(' ').at(-1) ?? ''),
        )
        .map((e) => dataOf(e).recipient),
    );
    const guardedOnly = deliveredBeforeKill.filter((address) => !recordedBeforeKill.has(address));
    expect(deliveredBeforeKill.length).toBeLessThan(recipients.length);
    // Some recipients' servers had taken the message while its outcome was not appended yet.
    expect(guardedOnly.length).toBeGreaterThan(0);

    mail.release();
    const second = await startSender();

    await eventually(
      async () => {
        const delivered = new Set(tap.events((e) => e.type === 'MessageDelivered').map((e) => dataOf(e).recipient));
        return recipients.every((address) => delivered.has(address.toLowerCase())) ? true : undefined;
      },
      90_000,
      'every recipient to be delivered',
    );
    for (const address of recipients) expect(mail.deliveriesTo(address), address).toBe(1);
    // Outcome events decided again after the crash carry the same event id as the first time.
    for (const address of recipients) {
      const ids = new Set(
        tap
          .allEvents((e) => e.type === 'MessageDelivered' && dataOf(e).recipient === address.toLowerCase())
          .map((e) => e.metadata.eventId),
      );
      expect(ids.size, address).toBe(1);
    }
    // The recipients whose server deferred them the first time were retried, and got the message once.
    const deferred = recipients.filter((address) => address.startsWith('defer1+'));
    for (const address of deferred) {
      expect(mail.deferralsOf(address), address).toBe(1);
      expect(mail.deliveriesTo(address), address).toBe(1);
    }

    // Graceful stop: SIGTERM, the process finishes what it holds and exits 0.
    second.kill('SIGTERM');
    expect(await exited(second)).toBe(0);
  });
});
