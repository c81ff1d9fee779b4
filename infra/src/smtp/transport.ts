import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import nodemailer, { type SMTPPoolOptions, type SMTPPoolSentMessageInfo, type Transporter } from 'nodemailer';
import type MailMessage from 'nodemailer/lib/mailer/mail-message';
import type { Envelope } from './compose';
import { DeliveryError } from './errors';
import type { MailHost, MailRouter } from './routing';

/**
 * The delivery transport: one SMTP transaction (MAIL FROM, RCPT TO each recipient, DATA with the
 * composed, signed bytes) to the mail servers of one recipient domain, over pooled connections (a
 * nodemailer SMTP pool per destination host). STARTTLS is used whenever a server offers it,
 * opportunistically: certificates are not verified (most MX hosts have none that would pass, and a
 * refusal would only push the message back to plain text) and a failed upgrade continues in plain text.
 *
 * The answer is per recipient: a server may refuse one RCPT TO and take the others. A failure of the
 * whole transaction (connection, timeout, MAIL FROM or DATA refused) applies to every recipient in it.
 * A host that cannot be reached (connection failure or timeout) makes the next MX host be tried.
 *
 * nodemailer's own retry of a message whose connection closed mid-send is switched off
 * (`maxRequeues: 0`): every retry goes through the sender's durable, recorded schedule instead.
 */

export interface SmtpTransportOptions {
  /** The name we greet with (EHLO). */
  heloName: string;
  /** Connections per destination host. */
  poolSize?: number;
  /** Messages a connection carries before it is replaced. */
  maxMessagesPerConnection?: number;
  connectionTimeoutMs?: number;
  greetingTimeoutMs?: number;
  socketTimeoutMs?: number;
  /** The longest one transaction may take in all (a server trickling its replies); then it fails as a timeout. */
  transactionTimeoutMs?: number;
  /** How long an idle pooled connection stays open. */
  idleTimeoutMs?: number;
  /** Verify the server's certificate on STARTTLS (off for MX delivery; see above). */
  verifyCertificates?: boolean;
}

/** One message to one domain's recipients. */
export interface SmtpTransaction {
  envelope: Envelope;
  raw: Buffer;
}

export type RecipientResult =
  | { recipient: string; accepted: true; response: string; host: string }
  | { recipient: string; accepted: false; error: DeliveryError };

export class SmtpDelivery {
  private readonly pools = new Map<string, Transporter<SMTPPoolSentMessageInfo>>();
  private closed = false;

  constructor(
    private readonly router: MailRouter,
    private readonly options: SmtpTransportOptions,
  ) {}

  /**
   * Sends one transaction to the servers of `domain` (all recipients of the envelope are at that domain,
   * or the router is a relay). Never throws: every recipient gets a result.
   */
  async send(domain: string, transaction: SmtpTransaction): Promise<RecipientResult[]> {
    const recipients = transaction.envelope.to;
    let hosts: MailHost[];
    try {
      hosts = await this.router.route(domain);
    } catch (error) {
      const failure = DeliveryError.from(error, { host: domain });
      return recipients.map((recipient) => ({ recipient, accepted: false, error: failure }));
    }
    let last: RecipientResult[] = [];
    for (const [index, host] of hosts.entries()) {
      last = await this.sendTo(host, transaction);
      const unreachable = last.every(
        (result) => !result.accepted && (result.error.kind === 'connection' || result.error.kind === 'timeout'),
      );
      if (!unreachable || index === hosts.length - 1) return last;
    }
    return last;
  }

  private async sendTo(host: MailHost, transaction: SmtpTransaction): Promise<RecipientResult[]> {
    const recipients = transaction.envelope.to;
    // A timer of our own, cleared when the transaction ends (AbortSignal.timeout's would fire later for
    // every transaction, finished or not, and build an error each time).
    const abort = new AbortController();
    const deadline = abort.signal;
    const timer = setTimeout(() => abort.abort(), this.options.transactionTimeoutMs ?? 45_000);
    try {
      const info = await this.pool(host).sendMail({
        envelope: { from: transaction.envelope.from, to: recipients },
        raw: transaction.raw,
        signal: deadline,
      });
      const accepted = new Set(info.accepted.map((address) => String(address).toLowerCase()));
      const refusals = new Map<string, DeliveryError>();
      for (const refusal of (info as { rejectedErrors?: unknown[] }).rejectedErrors ?? []) {
        const error = DeliveryError.from(refusal, { host: host.name });
        if (error.recipient) refusals.set(error.recipient.toLowerCase(), error);
      }
      return recipients.map((recipient): RecipientResult => {
        const key = recipient.toLowerCase();
        if (accepted.has(key)) return { recipient, accepted: true, response: info.response, host: host.name };
        const error =
          refusals.get(key) ??
          new DeliveryError(`${host.name} did not accept ${recipient} and gave no reason`, {
            kind: 'unknown',
            recipient,
            host: host.name,
          });
        return { recipient, accepted: false, error };
      });
    } catch (thrown) {
      const rejectedErrors = (thrown as { rejectedErrors?: unknown[] } | null)?.rejectedErrors;
      const perRecipient = new Map<string, DeliveryError>();
      for (const refusal of rejectedErrors ?? []) {
        const error = DeliveryError.from(refusal, { host: host.name });
        if (error.recipient) perRecipient.set(error.recipient.toLowerCase(), error);
      }
      const whole = deadline.aborted
        ? new DeliveryError(`the transaction with ${host.name} took longer than allowed`, {
            kind: 'timeout',
            host: host.name,
            cause: thrown,
          })
        : DeliveryError.from(thrown, { host: host.name });
      return recipients.map((recipient) => ({
        recipient,
        accepted: false,
        error: perRecipient.get(recipient.toLowerCase()) ?? whole,
      }));
    } finally {
      clearTimeout(timer);
    }
  }

  private pool(host: MailHost): Transporter<SMTPPoolSentMessageInfo> {
    const key = `${host.address}:${host.port}:${host.name}`;
    let pool = this.pools.get(key);
    if (!pool) {
      if (this.closed) throw new DeliveryError('the transport is closed', { kind: 'unknown', host: host.name });
      const options: SMTPPoolOptions & { pool: true } = {
        pool: true,
        host: host.address,
        port: host.port,
        secure: false,
        name: this.options.heloName,
        maxConnections: this.options.poolSize ?? 5,
        maxMessages: this.options.maxMessagesPerConnection ?? 100,
        maxRequeues: 0,
        idleTimeout: this.options.idleTimeoutMs ?? 30_000,
        connectionTimeout: this.options.connectionTimeoutMs ?? 30_000,
        greetingTimeout: this.options.greetingTimeoutMs ?? 30_000,
        socketTimeout: this.options.socketTimeoutMs ?? 60_000,
        opportunisticTLS: true,
        tls: {
          rejectUnauthorized: this.options.verifyCertificates ?? false,
          ...(isIP(host.name) === 0 && { servername: host.name }),
        },
      };
      pool = nodemailer.createTransport(options);
      pool.use('stream', readRawAsIs);
      this.pools.set(key, pool);
    }
    return pool;
  }

  /** Closes every pooled connection (connections in the middle of a message finish it first). */
  close(): void {
    this.closed = true;
    for (const pool of this.pools.values()) pool.close();
    this.pools.clear();
  }
}

/**
 * A 'stream' plugin (nodemailer's hook for how a compiled message is read): the pool reads the signed bytes as they
 * are, in one chunk. Left alone, the Mailer reads `raw` through the MIME node's stream: a PassThrough, a transform
 * that adds a last line break and one that makes every line end CRLF. Our bytes have both already (compose.ts writes
 * them so, and DKIM signs them as they are), and the SMTP client's own data stream dot-stuffs and ends them, turning
 * any bare CR or LF into CRLF on the way, as before. Still a stream: the pool tells "not a byte was read" from it.
 */
function readRawAsIs(mail: MailMessage, done: (err?: Error | null) => void): void {
  const raw = mail.data.raw;
  if (Buffer.isBuffer(raw)) mail.message.createReadStream = () => Readable.from([raw], { objectMode: false });
  done();
}
