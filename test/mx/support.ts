import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { pino } from 'pino';
import {
  AccountsView,
  createRedis,
  deleteKeys,
  returnPathKey,
  type EventAppender,
  type EventStore,
  type Redis,
  type StoredEvent,
} from '@sendline/infra';
import { CachedReturnPathHosts, mxConfigFromEnv, MxServer, type MxConfig } from '@sendline/mx';
import type { MailReceived } from '@sendline/domain';
import { addresses, uniqueName } from '../support/services';

/** One SMTP reply: its code and its text lines joined (the code and separators taken off). */
export interface Reply {
  code: number;
  text: string;
}

/**
 * A bare SMTP client over one socket, a command at a time: what a remote server says to our MX, byte for byte
 * (no SIZE declared unless the test writes it, no retry, no pipelining).
 */
export class SmtpDialog {
  private buffer = '';
  private waiting: ((reply: Reply) => void) | undefined;
  private readonly replies: Reply[] = [];
  closed = false;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      this.parse();
    });
    socket.on('close', () => {
      this.closed = true;
    });
    socket.on('error', () => undefined);
  }

  /** Connects and reads the greeting (or the refusal in its place). */
  static async open(port: number): Promise<{ dialog: SmtpDialog; greeting: Reply }> {
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const dialog = new SmtpDialog(socket);
    return { dialog, greeting: await dialog.reply() };
  }

  private parse(): void {
    for (;;) {
      const lines = this.buffer.split('\r\n');
      const last = lines.findIndex((line) => /^\d{3} /.test(line) || /^\d{3}$/.test(line));
      if (last < 0) return;
      const reply = {
        code: Number(lines[0]!.slice(0, 3)),
        text: lines
          .slice(0, last + 1)
          .map((line) => line.slice(4))
          .join('\n'),
      };
      this.buffer = lines.slice(last + 1).join('\r\n');
      if (this.waiting) {
        const waiting = this.waiting;
        this.waiting = undefined;
        waiting(reply);
      } else this.replies.push(reply);
    }
  }

  /** The next reply, within `timeoutMs`. */
  reply(timeoutMs = 15_000): Promise<Reply> {
    const queued = this.replies.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no SMTP reply within ${timeoutMs} ms`)), timeoutMs);
      this.waiting = (reply) => {
        clearTimeout(timer);
        resolve(reply);
      };
    });
  }

  async command(line: string, timeoutMs?: number): Promise<Reply> {
    this.socket.write(`${line}\r\n`);
    return this.reply(timeoutMs);
  }

  /** DATA, then the message dot-stuffed and its end: the reply to the end of data. */
  async data(raw: Buffer, timeoutMs = 30_000): Promise<Reply> {
    const start = await this.command('DATA');
    if (start.code !== 354) return start;
    const stuffed = Buffer.from(raw.toString('latin1').replace(/(^|\r\n)\./g, '$1..'), 'latin1');
    const ending = stuffed.subarray(-2).toString() === '\r\n' ? '.\r\n' : '\r\n.\r\n';
    this.socket.write(stuffed);
    this.socket.write(ending);
    return this.reply(timeoutMs);
  }

  /** EHLO, MAIL FROM, each RCPT TO, DATA: every reply, stopping at the first refusal of MAIL FROM or DATA. */
  async transaction(from: string, to: string[], raw: Buffer, helo = 'reporter.example'): Promise<Reply[]> {
    const replies = [await this.command(`EHLO ${helo}`), await this.command(`MAIL FROM:<${from}>`)];
    if (replies[1]!.code !== 250) return replies;
    for (const recipient of to) replies.push(await this.command(`RCPT TO:<${recipient}>`));
    replies.push(await this.data(raw));
    return replies;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Settings of an MX in a test: a free port, the limits the test names, the rest as in production. */
export function testMxConfig(overrides: Partial<MxConfig> = {}): MxConfig {
  return { ...mxConfigFromEnv({}), port: 0, closeTimeoutMs: 1000, ...overrides };
}

/**
 * The accounts view in a namespace of the test's own, with one organization and its sending domains, each with its
 * return path `bounces.<domain>` (not verified).
 */
export async function accountsWithDomains(...domains: string[]): Promise<{
  redis: Redis;
  accounts: AccountsView;
  cleanup: () => Promise<void>;
}> {
  const redis = createRedis(addresses.redisUrl);
  const namespace = uniqueName('mx-test');
  const accounts = new AccountsView(redis, namespace);
  const organizationId = uniqueName('org');
  const at = Date.now();
  const metadata = (n: number) => ({
    eventId: `${organizationId}-${n}`,
    organizationId,
    occurredAt: at,
    schemaVersion: 1,
  });
  await accounts.apply([
    {
      type: 'OrganizationCreated' as const,
      data: { organizationId, name: 'Shop', adminEmail: 'admin@shop.example' },
      metadata: metadata(0),
    },
    ...domains.map((domain, i) => ({
      type: 'DomainAdded' as const,
      data: {
        domain,
        verificationToken: 'token',
        dkimSelector: 'sl1',
        dkimPublicKey: 'key',
        dkimPrivateKeyEncrypted: 'sealed',
        returnPath: { host: `bounces.${domain}`, assignedAt: at, verifiedAt: null },
      },
      metadata: metadata(i + 1),
    })),
  ]);
  return {
    redis,
    accounts,
    cleanup: async () => {
      await deleteKeys(redis, `${namespace}:*`);
      redis.disconnect();
    },
  };
}

/** An MX on loopback writing to `store`, checking recipients against `accounts`, its tokens under `secretKey`. */
export function startTestMx(options: {
  store: EventAppender;
  accounts: AccountsView;
  secretKey: Buffer;
  config?: Partial<MxConfig>;
  /**
   * Take mail for the organizations' inbound addresses and verified own inbound domains (the accounts view's
   * indexes), as the MX process does.
   */
  inbound?: boolean;
}): Promise<MxServer> {
  return MxServer.start({
    config: testMxConfig(options.config),
    store: options.store,
    returnPathHosts: new CachedReturnPathHosts({ load: () => options.accounts.allReturnPathHosts(), ttlMs: 1000 }),
    ...(options.inbound && {
      inboundAddresses: { organizationOf: (hash: string) => options.accounts.organizationOfInboundHash(hash) },
      inboundDomains: {
        organizationOfDomain: (domain: string) => options.accounts.organizationOfInboundDomain(domain),
      },
    }),
    tokenKey: returnPathKey(options.secretKey),
    logger: pino({ level: process.env.MX_TEST_LOG ?? 'silent' }),
  });
}

export const randomSecretKey = (): Buffer => randomBytes(32);

/** Every MailReceived on the topic, with the key it was written under. */
export async function receivedOn(store: EventStore): Promise<{ event: MailReceived; key: string | null }[]> {
  const found: { event: MailReceived; key: string | null }[] = [];
  await store.readAll([store.topics.received], async (items) => {
    for (const item of items) {
      const event = item.event as StoredEvent | undefined;
      if (event?.type === 'MailReceived')
        found.push({ event: event as unknown as MailReceived, key: item.position.key });
    }
  });
  return found;
}
