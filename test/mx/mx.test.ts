/**
 * The receiving server (apps/mx) on the real Kafka, schema registry and Redis, on topics of its own: it takes mail
 * for return-path addresses only (never a relay), answers 250 only once the MailReceived is in Kafka (and 451,
 * never 250, when Kafka does not acknowledge), refuses a message over its size limit without recording it, and
 * limits the connections of one client address. A bare SMTP client on loopback speaks to it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import getTLSOptions from 'smtp-server/lib/tls-options.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore, returnPathAddress, returnPathKey, type AccountsView } from '@sendline/infra';
import type { MxServer } from '@sendline/mx';
import { freePort } from '../support/ports';
import { addresses, deleteTopicsAndDisconnect, eventually, freshEventStore } from '../support/services';
import { accountsWithDomains, randomSecretKey, receivedOn, SmtpDialog, startTestMx, type Reply } from './support';

const secretKey = randomSecretKey();
const key = returnPathKey(secretKey);
const ownDomain = 'bounces.sendline.dev';

/** A message with a line that starts with a dot, 8-bit bytes and a bare byte 0xff: all must come back as sent. */
function sampleMessage(marker: string): Buffer {
  return Buffer.concat([
    Buffer.from(
      `From: Mail Delivery System <MAILER-DAEMON@mx.example.org>\r\nTo: <x@y>\r\nSubject: ${marker}\r\n` +
        `MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n` +
        `.a line that starts with a dot\r\n..and one with two\r\nnaïve café\r\n`,
      'utf8',
    ),
    Buffer.from([0xff, 0x0d, 0x0a]),
    Buffer.from('.\r\nthe end\r\n'),
  ]);
}

describe('the MX', () => {
  let store: EventStore;
  let accounts: AccountsView;
  let cleanupAccounts: () => Promise<void>;
  let mx: MxServer;

  beforeAll(async () => {
    store = await freshEventStore('mx-test');
    ({ accounts, cleanup: cleanupAccounts } = await accountsWithDomains('shop.example'));
    mx = await startTestMx({ store, accounts, secretKey, config: { maxConnectionsPerAddress: 3 } });
  });

  afterAll(async () => {
    await mx?.stop();
    await cleanupAccounts?.();
    if (store) await deleteTopicsAndDisconnect(store);
  });

  async function rcpt(address: string): Promise<Reply> {
    const { dialog } = await SmtpDialog.open(mx.port);
    try {
      await dialog.command('EHLO reporter.example');
      await dialog.command('MAIL FROM:<>');
      return await dialog.command(`RCPT TO:<${address}>`);
    } finally {
      dialog.close();
    }
  }

  describe('RCPT TO', () => {
    it('refuses an address at an outside domain with 550 5.7.1: it is not a relay', async () => {
      const reply = await rcpt('someone@example.org');
      expect(reply.code).toBe(550);
      expect(reply.text).toMatch(/^5\.7\.1 .*relaying denied/);
    });

    it('refuses a b.<token> address at an outside domain the same way', async () => {
      const reply = await rcpt(returnPathAddress(key, { messageId: randomUUID(), recipientIndex: 0 }, 'gmail.com'));
      expect(reply).toMatchObject({ code: 550, text: expect.stringMatching(/^5\.7\.1 /) });
    });

    it('refuses postmaster at the return-path domain: only the b. shape is taken', async () => {
      const reply = await rcpt(`postmaster@${ownDomain}`);
      expect(reply.code).toBe(550);
      expect(reply.text).toMatch(/^5\.1\.1 /);
    });

    it('takes b.<anything> at the return-path domain of a sending domain, and refuses it at another', async () => {
      expect((await rcpt('b.forged@bounces.shop.example')).code).toBe(250);
      expect((await rcpt('b.forged@bounces.unknown.example')).code).toBe(550);
    });
  });

  describe('a message to b.<token>', () => {
    it('is answered 250 once its MailReceived is in Kafka, with the exact bytes and envelope', async () => {
      const messageId = randomUUID();
      const to = returnPathAddress(key, { messageId, recipientIndex: 2 }, ownDomain);
      const raw = sampleMessage(`dsn ${messageId}`);
      const { dialog, greeting } = await SmtpDialog.open(mx.port);
      expect(greeting.code).toBe(220);
      const replies = await dialog.transaction('', [to], raw, 'reporter.example');
      dialog.close();
      const end = replies.at(-1)!;
      expect(replies.map((r) => r.code)).toEqual([250, 250, 250, 250]);
      const receivedId = /queued as (\S+)/.exec(end.text)?.[1];
      expect(receivedId).toMatch(/^[0-9a-f-]{36}$/);

      // 250 came after the append: the record is there at once, no waiting.
      const records = (await receivedOn(store)).filter((r) => r.event.data.receivedId === receivedId);
      expect(records).toHaveLength(1);
      const { event, key: recordKey } = records[0]!;
      expect(Buffer.from(event.data.raw).equals(raw)).toBe(true);
      expect(event.data).toMatchObject({
        receivedId,
        envelopeFrom: '',
        envelopeTo: [to],
        remoteAddress: '127.0.0.1',
        heloName: 'reporter.example',
        messageId,
      });
      expect(event.data.receivedAt).toBeGreaterThan(Date.now() - 60_000);
      expect(event.metadata.organizationId).toBe('');
      // Keyed by the message the token names: reports about one message stay in order on one partition.
      expect(recordKey).toBe(messageId);
    });

    it('is taken with a forged token too, keyed by its own received id', async () => {
      const forged = `b.${'a'.repeat(44)}@bounces.shop.example`;
      const { dialog } = await SmtpDialog.open(mx.port);
      const replies = await dialog.transaction('mailer-daemon@mx.example.org', [forged], sampleMessage('forged'));
      dialog.close();
      expect(replies.at(-1)!.code).toBe(250);
      const receivedId = /queued as (\S+)/.exec(replies.at(-1)!.text)![1];
      const [record] = (await receivedOn(store)).filter((r) => r.event.data.receivedId === receivedId);
      expect(record?.key).toBe(receivedId);
      expect(record?.event.data).not.toHaveProperty('messageId');
      expect(record?.event.data.envelopeFrom).toBe('mailer-daemon@mx.example.org');
    });
  });

  describe('a message over the size limit (10 MB)', () => {
    it('is refused 552 5.3.4 after its data, and nothing is recorded', async () => {
      const to = returnPathAddress(key, { messageId: randomUUID(), recipientIndex: 0 }, ownDomain);
      const line = Buffer.from(`${'x'.repeat(998)}\r\n`);
      const big = Buffer.concat([
        Buffer.from('Subject: too big\r\n\r\n'),
        ...Array.from({ length: Math.ceil((20 * 1024 * 1024) / line.length) }, () => line),
      ]);
      const { dialog } = await SmtpDialog.open(mx.port);
      const replies = await dialog.transaction('', [to], big);
      dialog.close();
      expect(replies.at(-1)).toMatchObject({ code: 552, text: expect.stringMatching(/^5\.3\.4 /) });
      const records = await receivedOn(store);
      expect(records.filter((r) => r.event.data.envelopeTo.includes(to))).toEqual([]);
    });

    it('is refused 552 at MAIL FROM when the client declares its size', async () => {
      const { dialog } = await SmtpDialog.open(mx.port);
      const ehlo = await dialog.command('EHLO reporter.example');
      expect(ehlo.text).toMatch(/SIZE 10485760/);
      const reply = await dialog.command(`MAIL FROM:<> SIZE=${20 * 1024 * 1024}`);
      dialog.close();
      expect(reply.code).toBe(552);
    });
  });

  describe('connections from one address', () => {
    it('are refused 421 over the limit, and taken again once one closed', async () => {
      const open: SmtpDialog[] = [];
      try {
        for (let i = 0; i < 3; i++) {
          const { dialog, greeting } = await SmtpDialog.open(mx.port);
          open.push(dialog);
          expect(greeting.code).toBe(220);
        }
        const { dialog: fourth, greeting: refused } = await SmtpDialog.open(mx.port);
        open.push(fourth);
        expect(refused.code).toBe(421);
        expect(refused.text).toMatch(/^4\.7\.0 too many connections/);
        await eventually(async () => (fourth.closed ? true : undefined), 30_000, 'the refused connection to close');

        open[0]!.close();
        const again = await eventually(
          async () => {
            const { dialog, greeting } = await SmtpDialog.open(mx.port);
            open.push(dialog);
            return greeting.code === 220 ? greeting : undefined;
          },
          5000,
          'a connection to be taken again',
        );
        expect(again.code).toBe(220);
      } finally {
        for (const dialog of open) dialog.close();
      }
    });
  });
});

describe('the MX, one behaviour at a time', () => {
  let store: EventStore;
  let cleanupAccounts: () => Promise<void>;
  let accounts: AccountsView;

  beforeAll(async () => {
    store = await freshEventStore('mx-test-time');
    ({ accounts, cleanup: cleanupAccounts } = await accountsWithDomains());
  });

  afterAll(async () => {
    await cleanupAccounts?.();
    if (store) await deleteTopicsAndDisconnect(store);
  });

  it('answers the end of data only once the append resolved', async () => {
    let acknowledge: (() => void) | undefined;
    const appended: string[] = [];
    const slowStore = {
      append: (events: { type: string }[]) =>
        new Promise<void>((resolve) => {
          appended.push(...events.map((event) => event.type));
          acknowledge = resolve;
        }),
    };
    const mx = await startTestMx({ store: slowStore, accounts, secretKey });
    try {
      const { dialog } = await SmtpDialog.open(mx.port);
      await dialog.command('EHLO reporter.example');
      await dialog.command('MAIL FROM:<>');
      await dialog.command(`RCPT TO:<b.x@${ownDomain}>`);
      const answer = dialog.data(sampleMessage('slow'));
      await eventually(async () => (acknowledge ? true : undefined), 30_000, 'the append to start');
      const early = await Promise.race([answer, new Promise((resolve) => setTimeout(() => resolve('none'), 500))]);
      expect(early).toBe('none');
      acknowledge!();
      expect((await answer).code).toBe(250);
      expect(appended).toEqual(['MailReceived']);
      dialog.close();
    } finally {
      await mx.stop();
    }
  });

  it('offers neither AUTH nor STARTTLS without a certificate', async () => {
    const mx = await startTestMx({ store, accounts, secretKey });
    try {
      const { dialog } = await SmtpDialog.open(mx.port);
      const ehlo = await dialog.command('EHLO reporter.example');
      dialog.close();
      expect(ehlo.code).toBe(250);
      expect(ehlo.text).not.toMatch(/STARTTLS|AUTH/);
      expect(ehlo.text).toMatch(/SIZE 10485760/);
    } finally {
      await mx.stop();
    }
  });

  it('offers STARTTLS when a certificate and its key are configured', async () => {
    // smtp-server's own certificate for localhost, written to files as an operator's would be.
    const { key: pemKey, cert } = getTLSOptions({}) as { key: string; cert: string };
    const directory = await mkdtemp(join(tmpdir(), 'mx-tls-'));
    await writeFile(join(directory, 'key.pem'), pemKey);
    await writeFile(join(directory, 'cert.pem'), cert);
    const tls = { certFile: join(directory, 'cert.pem'), keyFile: join(directory, 'key.pem') };
    const mx = await startTestMx({ store, accounts, secretKey, config: { tls } });
    try {
      const { dialog } = await SmtpDialog.open(mx.port);
      const ehlo = await dialog.command('EHLO reporter.example');
      expect(ehlo.text).toMatch(/STARTTLS/);
      expect(ehlo.text).not.toMatch(/AUTH/);
      expect((await dialog.command('STARTTLS')).code).toBe(220);
      dialog.close();
    } finally {
      await mx.stop();
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('closes a connection that has lasted too long with 421 4.4.2', async () => {
    const mx = await startTestMx({ store, accounts, secretKey, config: { sessionTimeoutMs: 500 } });
    try {
      const { dialog } = await SmtpDialog.open(mx.port);
      expect((await dialog.command('EHLO reporter.example')).code).toBe(250);
      const closing = await dialog.reply(5000);
      expect(closing).toMatchObject({ code: 421, text: expect.stringMatching(/^4\.4\.2 /) });
      await eventually(async () => (dialog.closed ? true : undefined), 30_000, 'the connection to close');
    } finally {
      await mx.stop();
    }
  });

  it('answers an idle connection 421 when it stops, and takes no new one', async () => {
    const mx = await startTestMx({ store, accounts, secretKey });
    const { dialog } = await SmtpDialog.open(mx.port);
    expect((await dialog.command('EHLO reporter.example')).code).toBe(250);
    const stopped = mx.stop();
    expect(await dialog.reply(5000)).toMatchObject({ code: 421, text: expect.stringMatching(/^4\.3\.2 /) });
    await stopped;
    await expect(SmtpDialog.open(mx.port)).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('the MX with Kafka unreachable', () => {
  let store: EventStore;
  let unreachable: EventStore;
  let cleanupAccounts: () => Promise<void>;
  let mx: MxServer;

  beforeAll(async () => {
    // The registry is real (the schema is registered), the broker a closed port: the append can never be acknowledged.
    store = await freshEventStore('mx-test-down');
    const closedPort = await freePort();
    unreachable = new EventStore({
      brokers: [`127.0.0.1:${closedPort}`],
      registryUrl: addresses.schemaRegistryUrl,
      clientId: 'mx-test-unreachable',
      topics: store.topics,
      appendTimeoutMs: 3000,
    });
    const { accounts, cleanup } = await accountsWithDomains();
    cleanupAccounts = cleanup;
    mx = await startTestMx({ store: unreachable, accounts, secretKey });
  });

  afterAll(async () => {
    await mx?.stop();
    await unreachable?.disconnect().catch(() => undefined);
    await cleanupAccounts?.();
    if (store) await deleteTopicsAndDisconnect(store);
  });

  it('answers 451 4.3.0, never 250, and records nothing', async () => {
    const to = returnPathAddress(key, { messageId: randomUUID(), recipientIndex: 0 }, ownDomain);
    const { dialog } = await SmtpDialog.open(mx.port);
    const replies = await dialog.transaction('', [to], sampleMessage('kafka away'));
    dialog.close();
    expect(replies.slice(0, 3).map((r) => r.code)).toEqual([250, 250, 250]);
    expect(replies.at(-1)).toMatchObject({ code: 451, text: expect.stringMatching(/^4\.3\.0 /) });
    expect(mx.stats).toMatchObject({ received: 0, appendFailures: 1 });
    expect(await receivedOn(store)).toEqual([]);
  });
});
