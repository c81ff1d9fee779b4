import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { classifyDeliveryAttempt, type MessageAcceptedData } from '@sendline/domain';
import {
  answerForAddress,
  composeMessage,
  DeliveryError,
  dkimRecordsFromMap,
  dkimRecordValue,
  dkimSigningKey,
  envelopeOf,
  MemoryZone,
  MxRouter,
  parseHostPort,
  RelayRouter,
  signMessage,
  SmtpDelivery,
  startDnsServer,
  TestMailServer,
  type RunningDnsServer,
} from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The SMTP adapters (compose, DKIM, routing, transport) against the test mail server and a DNS server on loopback. */

const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const key = dkimSigningKey('shop.example.test', 'sel1', privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());

function message(recipients: string[], overrides: Partial<MessageAcceptedData> = {}): MessageAcceptedData {
  return {
    messageId: 'msg-1',
    from: { email: 'orders@shop.example.test', name: 'Shop' },
    to: recipients.map((email) => ({ email })),
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Hello',
    textBody: 'Hello there',
    headers: [],
    metadata: {},
    attachments: [],
    trackOpens: false,
    trackLinks: 'None',
    messageStream: 'outbound',
    sizeBytes: 11,
    activeRecipients: recipients.map((r) => r.toLowerCase()),
    suppressedRecipients: [],
    submittedAt: Date.UTC(2026, 10, 1),
    ...overrides,
  };
}

async function signed(data: MessageAcceptedData): Promise<Buffer> {
  return signMessage(await composeMessage(data), key);
}

let server: TestMailServer;
let dns: RunningDnsServer;
const zone = new MemoryZone();

beforeAll(async () => {
  server = await new TestMailServer({
    dkimRecords: dkimRecordsFromMap({
      'sel1._domainkey.shop.example.test': dkimRecordValue(
        publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      ),
    }),
  }).start();
  dns = await startDnsServer({ zone });
});
afterAll(async () => {
  await server?.stop();
  await dns?.close();
});

describe('the test mail server’s answers', () => {
  it('follow the recipient’s local part', () => {
    expect(answerForAddress('ann@x.test', 0)).toEqual({ action: 'accept' });
    expect(answerForAddress('HardBounce-1@x.test', 0)).toMatchObject({ action: 'refuse', code: 550 });
    expect(answerForAddress('policy@x.test', 0)).toMatchObject({ action: 'refuse', code: 550 });
    expect(answerForAddress('mailboxfull@x.test', 0)).toMatchObject({ action: 'refuse', code: 552 });
    expect(answerForAddress('drop@x.test', 0)).toEqual({ action: 'drop' });
    expect(answerForAddress('BounceLater+1@x.test', 0)).toEqual({ action: 'accept', later: 'bounce' });
    expect(answerForAddress('spamcomplaint@x.test', 0)).toEqual({ action: 'accept', later: 'complaint' });
    expect(answerForAddress('defer@x.test', 5)).toMatchObject({ action: 'refuse', code: 450 });
    expect(answerForAddress('defer2+a@x.test', 1)).toMatchObject({ action: 'refuse', code: 450 });
    expect(answerForAddress('defer2+a@x.test', 2)).toEqual({ action: 'accept' });
  });
});

describe('delivery errors', () => {
  it('map what nodemailer reports to attempts the domain classifies', () => {
    const refusal = DeliveryError.from(
      Object.assign(new Error('Recipient command failed'), {
        code: 'EENVELOPE',
        responseCode: 550,
        response: '550 5.1.1 <a@b.test>: user unknown',
        command: 'RCPT TO',
        recipient: 'a@b.test',
      }),
    );
    expect(refusal).toMatchObject({ kind: 'response', retriable: false, recipient: 'a@b.test', command: 'RCPT TO' });
    expect(classifyDeliveryAttempt(refusal.attempt!).kind).toBe('HardBounce');
    const deferral = DeliveryError.from(
      Object.assign(new Error('try later'), { responseCode: 421, response: '421 busy' }),
    );
    expect(deferral).toMatchObject({ kind: 'response', retriable: true });
    expect(classifyDeliveryAttempt(deferral.attempt!).kind).toBe('Transient');
    const timeout = DeliveryError.from(Object.assign(new Error('Greeting never received'), { code: 'ETIMEDOUT' }));
    expect(timeout.attempt).toEqual({ kind: 'timeout' });
    const refused = DeliveryError.from(
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ESOCKET', originalCode: 'ECONNREFUSED' }),
      { host: 'mx.b.test' },
    );
    expect(refused.attempt).toEqual({ kind: 'connection', text: 'mx.b.test: connect ECONNREFUSED' });
    const unknown = DeliveryError.from(new TypeError('x is not a function'));
    expect(unknown).toMatchObject({ kind: 'unknown', retriable: false });
    expect(unknown.attempt).toBeUndefined();
  });

  it('parse relay addresses', () => {
    expect(parseHostPort('127.0.0.1:2525')).toEqual({ host: '127.0.0.1', port: 2525 });
    expect(parseHostPort('mail.example.com')).toEqual({ host: 'mail.example.com', port: 25 });
    expect(parseHostPort('[::1]:2525')).toEqual({ host: '::1', port: 2525 });
    expect(() => parseHostPort('host:99999')).toThrow(/host:port/);
  });
});

describe('one SMTP transaction', () => {
  it('gives each recipient its own answer, and the message arrives signed', async () => {
    const recipients = ['Ann@dest.test', 'hardbounce@dest.test', 'defer@dest.test', 'policy@dest.test'];
    const data = message(recipients, { messageId: 'msg-per-recipient' });
    const delivery = new SmtpDelivery(new RelayRouter(server.host, server.port), { heloName: 'test.sendline' });
    try {
      const results = await delivery.send('dest.test', {
        envelope: envelopeOf(data, data.activeRecipients, data.from.email),
        raw: await signed(data),
      });
      const byRecipient = new Map(results.map((r) => [r.recipient, r]));
      expect(byRecipient.get('Ann@dest.test')).toMatchObject({ accepted: true, host: server.host });
      const kinds = recipients.slice(1).map((r) => {
        const result = byRecipient.get(r)!;
        return result.accepted ? 'accepted' : classifyDeliveryAttempt(result.error.attempt!).kind;
      });
      expect(kinds).toEqual(['HardBounce', 'Transient', 'PolicyRejection']);
      const received = server.messages().find((m) => m.messageId === '<msg-per-recipient@shop.example.test>');
      expect(received?.recipients).toEqual(['Ann@dest.test']);
      expect(received?.dkim).toEqual({ result: 'pass', domain: 'shop.example.test', selector: 'sel1' });
      expect(received?.tls).toBe(true);
    } finally {
      delivery.close();
    }
  });

  it('carries the signed bytes unchanged: lines that start with a dot, a large attachment, over STARTTLS', async () => {
    const data = message(['bytes@dest.test'], {
      messageId: 'msg-bytes',
      textBody: '.a line that starts with a dot\n..two of them\n.\nand a lone dot above',
      attachments: [
        { name: 'big.bin', contentType: 'application/octet-stream', content: randomBytes(300_000).toString('base64') },
      ],
    });
    const raw = await signed(data);
    const delivery = new SmtpDelivery(new RelayRouter(server.host, server.port), { heloName: 'test.sendline' });
    try {
      const results = await delivery.send('dest.test', {
        envelope: envelopeOf(data, data.activeRecipients, data.from.email),
        raw,
      });
      expect(results.map((r) => r.accepted)).toEqual([true]);
      const received = server.messages().find((m) => m.messageId === '<msg-bytes@shop.example.test>');
      expect(received?.raw?.equals(raw)).toBe(true);
      expect(received?.dkim.result).toBe('pass');
      expect(received?.tls).toBe(true);
    } finally {
      delivery.close();
    }
  });

  it('fails every recipient as a connection failure when the server drops the connection', async () => {
    const data = message(['drop@dest.test', 'fine@dest.test']);
    const delivery = new SmtpDelivery(new RelayRouter(server.host, server.port), { heloName: 'test.sendline' });
    try {
      const results = await delivery.send('dest.test', {
        envelope: envelopeOf(data, data.activeRecipients, data.from.email),
        raw: await signed(data),
      });
      expect(results.map((r) => (r.accepted ? 'accepted' : r.error.kind))).toEqual(['connection', 'connection']);
      expect(server.deliveriesTo('fine@dest.test')).toBe(0);
    } finally {
      delivery.close();
    }
  });
});

describe('MX routing', () => {
  it('delivers to the first reachable MX host of the recipient’s domain', async () => {
    zone.publish(
      { type: 'MX', name: 'mx-route.test', value: '127.0.0.2', priority: 5 },
      { type: 'MX', name: 'mx-route.test', value: '127.0.0.1', priority: 10 },
    );
    const router = new MxRouter({ servers: [dns.address], port: server.port });
    expect(await router.route('mx-route.test')).toEqual([
      { name: '127.0.0.2', address: '127.0.0.2', port: server.port },
      { name: '127.0.0.1', address: '127.0.0.1', port: server.port },
    ]);
    const data = message(['someone@mx-route.test'], { messageId: 'msg-mx' });
    const delivery = new SmtpDelivery(router, { heloName: 'test.sendline', connectionTimeoutMs: 2000 });
    try {
      const [result] = await delivery.send('mx-route.test', {
        envelope: envelopeOf(data, data.activeRecipients, data.from.email),
        raw: await signed(data),
      });
      expect(result).toMatchObject({ accepted: true, host: '127.0.0.1' });
      expect(server.deliveriesTo('someone@mx-route.test')).toBe(1);
    } finally {
      delivery.close();
    }
  });

  it('answers a domain that does not exist, or has no mail host, as a bad destination (hard bounce)', async () => {
    zone.publish({ type: 'TXT', name: 'no-mail.test', value: 'v=spf1 -all' });
    const router = new MxRouter({ servers: [dns.address] });
    for (const domain of ['nowhere.test', 'no-mail.test']) {
      const error = await router.route(domain).then(
        () => undefined,
        (e: unknown) => e as DeliveryError,
      );
      expect(error).toBeInstanceOf(DeliveryError);
      expect(error!.responseCode).toBe(550);
      expect(classifyDeliveryAttempt(error!.attempt!)).toMatchObject({ kind: 'HardBounce', enhancedStatus: '5.1.2' });
    }
  });

  it('defers when the DNS server cannot be reached', async () => {
    const router = new MxRouter({ servers: ['127.0.0.1:9'], timeoutMs: 200, tries: 1 });
    const error = (await router.route('anything.test').catch((e: unknown) => e)) as DeliveryError;
    expect(error.kind).toBe('connection');
    expect(classifyDeliveryAttempt(error.attempt!).kind).toBe('Transient');
  });
});
