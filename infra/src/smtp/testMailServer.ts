import { randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import { answerForAddress, type LaterReport } from './addressAnswers';
import { checkDkim, type DkimCheck, type DkimRecordSource } from './dkimCheck';
import { parseHostPort } from './routing';
import { abuseReport, deliveryStatusNotification, type OriginalMessage, type ReportIdentity } from './testReports';

/**
 * A real SMTP server on loopback (the `smtp-server` package) for development and tests. It answers each
 * recipient by its address, checks the DKIM signature of every message it receives with `mailauth`, and
 * keeps what it received (in memory, and optionally one JSON line per message in a file).
 *
 * Each recipient is answered at RCPT TO by `answerForAddress` (addressAnswers.ts: the rule table is there); the
 * DKIM check and where it finds public keys are in dkimCheck.ts.
 *
 * STARTTLS is offered (smtp-server's built-in test certificate: encrypted, not trusted).
 *
 * Reports after a 250 (`bouncelater…`, `spamcomplaint…`): with `reports.mx` set, a moment after the message was
 * accepted the server sends a DSN or an ARF report (testReports.ts) from `<>` to the message's envelope sender,
 * through that MX (ours: the return path is ours), as a real recipient's server or feedback loop would. A message
 * with the null sender gets none (a report is never sent about a report).
 */

/** A report sent back (or given up on) after a 250. */
export interface SentReport {
  kind: LaterReport;
  /** The original message's envelope sender: the report's recipient. */
  to: string;
  /** The recipients it is about. */
  about: string[];
  /** The MX's answer to the report, when it took it. */
  response?: string;
  /** Why it was not delivered, after every attempt. */
  error?: string;
  attempts: number;
}

export interface TestMailReportsOptions {
  /** The MX to deliver reports to, `host:port`. */
  mx: string;
  /** How long after the 250 a report is sent (default 1000 ms). */
  delayMs?: number;
  /** Attempts at delivering one report, a second apart and doubling (default 3). */
  attempts?: number;
  onReport?: (report: SentReport) => void;
}

export interface ReceivedMessage {
  /** The queue id this server gave it. */
  id: string;
  receivedAt: number;
  envelopeFrom: string;
  /** The recipients of this transaction (RCPT TO accepted), as given. */
  recipients: string[];
  /** Header values as written (not decoded). */
  messageId?: string;
  from?: string;
  subject?: string;
  headers: { name: string; value: string }[];
  size: number;
  /** Whether the connection was upgraded with STARTTLS. */
  tls: boolean;
  dkim: DkimCheck;
  /** The message as received (kept unless `keepRaw` is false). */
  raw?: Buffer;
}

export interface TestMailServerOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** Where DKIM public keys come from; without it every signature verifies as temperror. */
  dkimRecords?: DkimRecordSource;
  /** Verify DKIM: true (the default) for every message, false for none, N for every N-th message (a load test). */
  verifyDkim?: boolean | number;
  /** Keep each message's bytes in memory (default true). */
  keepRaw?: boolean;
  /** How many messages are kept in memory, the oldest dropped first (default: all). Counts are kept for all. */
  maxKept?: number;
  /** One JSON line per received message is appended here. */
  journalFile?: string;
  /** Include the message's text in the journal lines (default false). */
  journalRaw?: boolean;
  /** Offer STARTTLS (default true). */
  tls?: boolean;
  /** The greeting's host name. */
  name?: string;
  /** Largest message accepted, bytes (default 30 MB). */
  maxSize?: number;
  onMessage?: (message: ReceivedMessage) => void;
  /** Where the reports after a 250 go (`bouncelater…`, `spamcomplaint…`); without it none is sent. */
  reports?: TestMailReportsOptions;
}

function headerBlock(raw: Buffer): { name: string; value: string }[] {
  const end = raw.indexOf('\r\n\r\n');
  const text = raw.subarray(0, end < 0 ? raw.length : end).toString('utf8');
  const headers: { name: string; value: string }[] = [];
  for (const line of text.split(/\r?\n(?![ \t])/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    headers.push({
      name: line.slice(0, colon).trim(),
      value: line
        .slice(colon + 1)
        .replace(/\r?\n[ \t]+/g, ' ')
        .trim(),
    });
  }
  return headers;
}

interface HeldAnswer {
  release(): void;
}

export class TestMailServer {
  private readonly server: SMTPServer;
  private readonly kept: ReceivedMessage[] = [];
  private readonly counts = new Map<string, number>();
  private readonly deferrals = new Map<string, number>();
  private readonly journal: WriteStream | undefined;
  private readonly held: HeldAnswer[] = [];
  private holding: ((address: string) => boolean) | undefined;
  private readonly reportTimers = new Set<NodeJS.Timeout>();
  private readonly reportsInFlight = new Set<Promise<void>>();
  private reportCount = 0;
  private total = 0;
  private arrivals = 0;
  private dataInProgress = 0;
  private listeningPort = 0;

  constructor(private readonly options: TestMailServerOptions = {}) {
    if (options.journalFile) {
      mkdirSync(dirname(options.journalFile), { recursive: true });
      this.journal = createWriteStream(options.journalFile, { flags: 'a' });
    }
    this.server = new SMTPServer({
      name: options.name ?? 'mail.sendline.test',
      banner: 'Sendline test mail server',
      authOptional: true,
      disabledCommands: options.tls === false ? ['AUTH', 'STARTTLS'] : ['AUTH'],
      hideENHANCEDSTATUSCODES: true,
      size: options.maxSize ?? 30 * 1024 * 1024,
      logger: false,
      disableReverseLookup: true,
      onRcptTo: (address, session, callback) => this.onRcptTo(address, session, callback),
      onData: (stream, session, callback) => {
        this.dataInProgress++;
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('error', (error) => {
          this.dataInProgress--;
          callback(error);
        });
        stream.on('end', () => {
          const raw = Buffer.concat(chunks);
          if ((stream as { sizeExceeded?: boolean }).sizeExceeded) {
            this.dataInProgress--;
            return callback(Object.assign(new Error('5.3.4 Message too big'), { responseCode: 552 }));
          }
          this.receive(raw, session).then(
            (message) => {
              this.dataInProgress--;
              callback(null, `OK: queued as ${message.id}`);
            },
            (error: unknown) => {
              this.dataInProgress--;
              callback(Object.assign(new Error(`4.3.0 ${String(error)}`), { responseCode: 451 }));
            },
          );
        });
      },
    });
    this.server.on('error', () => {
      // A client that vanished mid-session: nothing to do.
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.listeningPort = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  get port(): number {
    return this.listeningPort;
  }

  get host(): string {
    return this.options.host ?? '127.0.0.1';
  }

  /** `host:port`, as SENDLINE_SMTP_RELAY takes it. */
  get address(): string {
    return `${this.host}:${this.port}`;
  }

  async stop(): Promise<void> {
    this.release();
    for (const timer of this.reportTimers) clearTimeout(timer);
    this.reportTimers.clear();
    await Promise.allSettled([...this.reportsInFlight]);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await new Promise<void>((resolve) => (this.journal ? this.journal.end(resolve) : resolve()));
  }

  /** The messages kept in memory, oldest first. */
  messages(): ReceivedMessage[] {
    return [...this.kept];
  }

  /** How many messages were received in all. */
  get received(): number {
    return this.total;
  }

  /** How many messages this address received (every transaction that named it, counted once each). */
  deliveriesTo(address: string): number {
    return this.counts.get(address.toLowerCase()) ?? 0;
  }

  /** How many reports (DSN, ARF) the MX took so far. */
  get reportsSent(): number {
    return this.reportCount;
  }

  /** How many times this server answered 4xx to the address. */
  deferralsOf(address: string): number {
    return this.deferrals.get(address.toLowerCase()) ?? 0;
  }

  /** Addresses and how many messages each received. */
  deliveryCounts(): Map<string, number> {
    return new Map(this.counts);
  }

  /**
   * From now on, RCPT TO answers for the addresses `which` selects (default: all) wait until `release()`:
   * a test stops senders at a known point.
   */
  hold(which: (address: string) => boolean = () => true): void {
    this.holding = which;
  }

  /** Answers every held RCPT TO and stops holding. */
  release(): void {
    this.holding = undefined;
    for (const held of this.held.splice(0)) held.release();
  }

  /** RCPT TO commands waiting for `release()`. */
  get heldCount(): number {
    return this.held.length;
  }

  /** Messages whose DATA is being received or checked right now. */
  get receiving(): number {
    return this.dataInProgress;
  }

  private onRcptTo(
    address: SMTPServerAddress,
    session: SMTPServerSession,
    callback: (error?: Error | null) => void,
  ): void {
    const answer = () => {
      const key = address.address.toLowerCase();
      const decision = answerForAddress(address.address, this.deferrals.get(key) ?? 0);
      if (decision.action === 'accept') return callback();
      if (decision.action === 'drop') {
        for (const connection of this.server.connections as Set<{ id: string; _socket?: { destroy(): void } }>) {
          if (connection.id === session.id) connection._socket?.destroy();
        }
        return;
      }
      if (decision.code < 500) this.deferrals.set(key, (this.deferrals.get(key) ?? 0) + 1);
      callback(Object.assign(new Error(decision.message), { responseCode: decision.code }));
    };
    if (this.holding?.(address.address)) this.held.push({ release: answer });
    else answer();
  }

  private async receive(raw: Buffer, session: SMTPServerSession): Promise<ReceivedMessage> {
    const headers = headerBlock(raw);
    const header = (name: string) => headers.find((h) => h.name.toLowerCase() === name)?.value;
    const mailFrom = session.envelope.mailFrom;
    const message: ReceivedMessage = {
      id: randomUUID(),
      receivedAt: Date.now(),
      envelopeFrom: mailFrom ? mailFrom.address : '',
      recipients: session.envelope.rcptTo.map((rcpt) => rcpt.address),
      ...(header('message-id') !== undefined && { messageId: header('message-id') }),
      ...(header('from') !== undefined && { from: header('from') }),
      ...(header('subject') !== undefined && { subject: header('subject') }),
      headers,
      size: raw.length,
      tls: session.secure,
      dkim: this.shouldVerify() ? await checkDkim(raw, this.options.dkimRecords) : { result: 'unchecked' },
      ...(this.options.keepRaw !== false && { raw }),
    };
    this.total++;
    for (const recipient of message.recipients) {
      const key = recipient.toLowerCase();
      this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    }
    this.kept.push(message);
    if (this.options.maxKept !== undefined && this.kept.length > this.options.maxKept) this.kept.shift();
    if (this.journal) {
      const { raw: bytes, ...line } = message;
      const entry = this.options.journalRaw && bytes ? { ...line, raw: bytes.toString('utf8') } : line;
      this.journal.write(`${JSON.stringify(entry)}\n`);
    }
    this.options.onMessage?.(message);
    this.scheduleReports(message, raw, session.remoteAddress);
    return message;
  }

  /** The reports owed for this message's recipients (addressAnswers.ts), each sent after `reports.delayMs`. */
  private scheduleReports(message: ReceivedMessage, raw: Buffer, sourceIp: string): void {
    const reports = this.options.reports;
    if (!reports || message.envelopeFrom === '') return;
    const owed = (kind: LaterReport) =>
      message.recipients.filter((recipient) => {
        const answer = answerForAddress(recipient, 0);
        return answer.action === 'accept' && answer.later === kind;
      });
    const original: OriginalMessage = {
      envelopeFrom: message.envelopeFrom,
      arrivalDate: new Date(message.receivedAt),
      sourceIp,
      raw,
    };
    const bounced = owed('bounce');
    const complained = owed('complaint');
    if (bounced.length > 0) {
      this.later(reports, 'bounce', message.envelopeFrom, bounced, () =>
        deliveryStatusNotification(
          this.reportIdentity(),
          original,
          bounced.map((address) => ({
            address,
            status: '5.1.1',
            diagnostic: `550 5.1.1 <${address}>: user unknown`,
          })),
        ),
      );
    }
    for (const recipient of complained) {
      this.later(reports, 'complaint', message.envelopeFrom, [recipient], () =>
        abuseReport(this.reportIdentity(), original, recipient),
      );
    }
  }

  private reportIdentity(): ReportIdentity {
    const reportingMta = this.options.name ?? 'mail.sendline.test';
    return {
      reportingMta,
      messageId: `${randomUUID()}@${reportingMta}`,
      boundary: `report-${randomBytes(12).toString('hex')}`,
      date: new Date(),
    };
  }

  private later(
    reports: TestMailReportsOptions,
    kind: LaterReport,
    to: string,
    about: string[],
    build: () => Buffer,
  ): void {
    const timer = setTimeout(() => {
      this.reportTimers.delete(timer);
      const sending = this.sendReport(reports, kind, to, about, build()).finally(() =>
        this.reportsInFlight.delete(sending),
      );
      this.reportsInFlight.add(sending);
    }, reports.delayMs ?? 1000);
    this.reportTimers.add(timer);
  }

  /** Delivers one report from `<>` to `to` through the MX, trying again a few times as a mail queue would. */
  private async sendReport(
    reports: TestMailReportsOptions,
    kind: LaterReport,
    to: string,
    about: string[],
    raw: Buffer,
  ): Promise<void> {
    const { host, port } = parseHostPort(reports.mx);
    const attempts = reports.attempts ?? 3;
    let error = '';
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const transport = nodemailer.createTransport({
        host,
        port,
        secure: false,
        ignoreTLS: true,
        name: this.options.name ?? 'mail.sendline.test',
        connectionTimeout: 5000,
        greetingTimeout: 5000,
        socketTimeout: 15_000,
      });
      try {
        // The null reverse path: a report must never be answered by another report.
        const info = await transport.sendMail({ envelope: { from: '', to: [to] }, raw });
        this.reportCount++;
        reports.onReport?.({ kind, to, about, response: info.response, attempts: attempt });
        return;
      } catch (cause) {
        error = String((cause as { response?: string }).response ?? cause);
        // A permanent refusal (5xx) is not tried again.
        if (((cause as { responseCode?: number }).responseCode ?? 0) >= 500) {
          reports.onReport?.({ kind, to, about, error, attempts: attempt });
          return;
        }
      } finally {
        transport.close();
      }
      if (attempt < attempts) await new Promise((resolve) => setTimeout(resolve, 1000 * 2 ** (attempt - 1)));
    }
    reports.onReport?.({ kind, to, about, error, attempts });
  }

  private shouldVerify(): boolean {
    const every = this.options.verifyDkim ?? true;
    if (typeof every === 'boolean') return every;
    return every > 0 && this.arrivals++ % every === 0;
  }
}
