import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import {
  SMTPServer,
  type SMTPServerAddress,
  type SMTPServerDataStream,
  type SMTPServerOptions,
  type SMTPServerSession,
} from 'smtp-server';
import {
  receivedMailDecider,
  type ReceivedMailCommand,
  type ReceivedMailEvent,
  type ReceivedMailState,
} from '@sendline/domain';
import { CommandHandler, describeCause, type EventAppender } from '@sendline/infra';
import type { MxConfig } from './config';
import { ConnectionsPerAddress } from './connections';
import { recordMailReceived } from './received';
import {
  recipientVerdict,
  type InboundAddresses,
  type InboundDomains,
  type RecipientKind,
  type ReturnPathHosts,
} from './recipients';

export interface MxServerOptions {
  config: MxConfig;
  /** Where MailReceived goes: the event store (an append resolves once every in-sync replica has it). */
  store: EventAppender;
  returnPathHosts: ReturnPathHosts;
  /** The organizations' inbound addresses; absent: no inbound mail is taken (every inbound address is refused). */
  inboundAddresses?: InboundAddresses;
  /** The organizations' verified own inbound domains; absent: none is taken. */
  inboundDomains?: InboundDomains;
  /** returnPathKey(secret key): reads the first recipient's token for the record's key. */
  tokenKey: Buffer;
  logger: Logger;
  now?: () => number;
  newId?: () => string;
}

/** What the server did since it started (also in its log lines, one per message or refusal). */
export interface MxStats {
  received: number;
  receivedBytes: number;
  refusedRecipients: number;
  tooLarge: number;
  appendFailures: number;
  refusedConnections: number;
}

/** A reply with its code: smtp-server answers a handler's error with `responseCode` and the message as written. */
function reply(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

/** The parts of smtp-server's connection the session timeout and the shutdown use (its public methods). */
interface OpenConnection {
  id: string;
  send(code: number, message: string): void;
  close(): void;
}

/**
 * The receiving server (MX): takes mail for return-path addresses only (recipients.ts) and records each message in
 * Kafka (MailReceived on mail.received) before it answers 250, as the API answers 200 only once the broker has
 * acknowledged. Each step and what happens when it fails:
 *
 * 1. Connect: over `maxConnections` in all, or `maxConnectionsPerAddress` from the client's address → 421, closed.
 *    A connection lasts at most `sessionTimeoutMs` (then 421 4.4.2 and closed, but never while a message is being
 *    recorded), and is dropped after `socketTimeoutMs` of silence. No AUTH; STARTTLS only with a configured certificate.
 * 2. MAIL FROM: anything, the null reverse path `<>` included; a declared SIZE over `maxBytes` → 552.
 * 3. RCPT TO: the recipient policy: relaying → 550 5.7.1, a mailbox we do not have → 550 5.1.1; the sending
 *    domains could not be read (Redis away) → 451 4.3.0 (the client tries again later).
 * 4. DATA: over `maxBytes` → 552 5.3.4 and nothing recorded. Otherwise MailReceived is appended; 250 with the
 *    received id once Kafka acknowledged it, 451 4.3.0 when it did not (refused, unreachable, no answer within
 *    `appendTimeoutMs`): the client keeps the message and tries again, so nothing is lost, and at worst (an append
 *    that landed unacknowledged) recorded twice under two received ids.
 *
 * Enhanced status codes are written in each reply's text (smtp-server's own mapping would give a relay refusal
 * 5.1.1), so the server does not announce ENHANCEDSTATUSCODES; its own replies (a declared SIZE too large, too
 * many recipients, timeouts) come without one.
 */
export class MxServer {
  readonly stats: MxStats = {
    received: 0,
    receivedBytes: 0,
    refusedRecipients: 0,
    tooLarge: 0,
    appendFailures: 0,
    refusedConnections: 0,
  };
  private readonly server: SMTPServer;
  private readonly handler: CommandHandler<ReceivedMailState, ReceivedMailCommand, ReceivedMailEvent>;
  private readonly perAddress: ConnectionsPerAddress;
  private readonly sessionTimers = new Map<string, NodeJS.Timeout>();
  /** Each session's first accepted recipient of its transaction and its kind (recipients.ts). */
  private readonly firstRecipients = new Map<string, { address: string; kind: RecipientKind }>();
  /** Sessions whose message is being appended: not closed under it by the session timeout or the shutdown. */
  private readonly appending = new Set<string>();
  private readonly now: () => number;
  private readonly newId: () => string;
  private stopping = false;
  private listeningPort = 0;

  private constructor(
    private readonly options: MxServerOptions,
    tls: { key: Buffer; cert: Buffer } | undefined,
  ) {
    const { config } = options;
    this.now = options.now ?? Date.now;
    this.newId = options.newId ?? randomUUID;
    this.perAddress = new ConnectionsPerAddress(config.maxConnectionsPerAddress);
    this.handler = new CommandHandler({ decider: receivedMailDecider, store: options.store });
    const serverOptions: SMTPServerOptions = {
      name: config.name,
      banner: 'Sendline MX',
      authOptional: true,
      disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
      ...(tls ?? {}),
      hideENHANCEDSTATUSCODES: true,
      hideDSN: true,
      size: config.maxBytes,
      maxRecipients: config.maxRecipients,
      maxClients: config.maxConnections,
      socketTimeout: config.socketTimeoutMs,
      closeTimeout: config.closeTimeoutMs,
      disableReverseLookup: true,
      logger: false,
      onConnect: (session, callback) => this.onConnect(session, callback),
      onRcptTo: (address, session, callback) => void this.onRcptTo(address, session, callback),
      onData: (stream, session, callback) => this.onData(stream, session, callback),
      onClose: (session) => this.onClose(session),
    };
    this.server = new SMTPServer(serverOptions);
    this.server.on('error', (error) => {
      // A client that vanished mid-session, a TLS handshake gone wrong: the connection is gone, the server is not.
      options.logger.debug({ err: error }, 'connection error');
    });
  }

  /** Builds the server (reading the TLS files, if any) and listens on the configured host and port. */
  static async start(options: MxServerOptions): Promise<MxServer> {
    const files = options.config.tls;
    const tls = files ? { cert: await readFile(files.certFile), key: await readFile(files.keyFile) } : undefined;
    const mx = new MxServer(options, tls);
    await mx.listen();
    return mx;
  }

  private async listen(): Promise<void> {
    const { host, port } = this.options.config;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.listeningPort = (this.server.server.address() as AddressInfo).port;
  }

  get port(): number {
    return this.listeningPort;
  }

  /** `host:port`, as SENDLINE_MX_ADDRESS takes it. */
  get address(): string {
    return `${this.options.config.host}:${this.listeningPort}`;
  }

  /**
   * Stops: no new connection; an idle connection is answered 421 and closed at once; a message being appended
   * gets its answer first; whatever is left after `closeTimeoutMs` is closed with 421 by smtp-server.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const connection of this.connections()) {
      if (!this.appending.has(connection.id)) this.closeWith(connection, 421, '4.3.2 Sendline MX shutting down');
    }
    await closed;
    for (const timer of this.sessionTimers.values()) clearTimeout(timer);
    this.sessionTimers.clear();
  }

  private connections(): OpenConnection[] {
    return [...(this.server.connections as unknown as Set<OpenConnection>)];
  }

  private closeWith(connection: OpenConnection, code: number, message: string): void {
    connection.send(code, message);
    connection.close();
  }

  private closeSession(sessionId: string, code: number, message: string): void {
    const connection = this.connections().find((c) => c.id === sessionId);
    if (connection) this.closeWith(connection, code, message);
  }

  private onConnect(session: SMTPServerSession, callback: (error?: Error | null) => void): void {
    const address = session.remoteAddress;
    if (this.stopping) return callback(reply(421, '4.3.2 Sendline MX shutting down, try again later'));
    if (!this.perAddress.admit(address, session.id)) {
      this.stats.refusedConnections++;
      this.options.logger.warn(
        { remote: address, open: this.perAddress.count(address) },
        'connection refused: too many from this address',
      );
      return callback(reply(421, `4.7.0 too many connections from ${address}, try again later`));
    }
    this.armSessionTimer(session.id, this.options.config.sessionTimeoutMs);
    callback();
  }

  /** Closes the connection once it has lasted `sessionTimeoutMs`, never in the middle of an append. */
  private armSessionTimer(sessionId: string, ms: number): void {
    const timer = setTimeout(() => {
      if (this.appending.has(sessionId)) return this.armSessionTimer(sessionId, 1000);
      this.sessionTimers.delete(sessionId);
      this.closeSession(sessionId, 421, '4.4.2 connection open too long, closing');
    }, ms);
    timer.unref();
    this.sessionTimers.set(sessionId, timer);
  }

  private onClose(session: SMTPServerSession): void {
    this.perAddress.release(session.remoteAddress, session.id);
    clearTimeout(this.sessionTimers.get(session.id));
    this.sessionTimers.delete(session.id);
    this.firstRecipients.delete(session.id);
  }

  private async onRcptTo(
    address: SMTPServerAddress,
    session: SMTPServerSession,
    callback: (error?: Error | null) => void,
  ): Promise<void> {
    let verdict;
    const { inboundAddresses, inboundDomains, config } = this.options;
    try {
      verdict = await recipientVerdict(
        address.address,
        config.returnPath,
        this.options.returnPathHosts,
        inboundAddresses && {
          domain: config.inboundDomain,
          addresses: inboundAddresses,
          ...(inboundDomains && { domains: inboundDomains }),
        },
      );
    } catch (error) {
      this.options.logger.error(
        { err: error, recipient: address.address, remote: session.remoteAddress },
        'recipient not checked: the sending domains could not be read',
      );
      return callback(reply(451, '4.3.0 temporary failure, try again later'));
    }
    if (verdict.accepted) {
      // One kind per transaction (recipients.ts): the other kind is deferred to a transaction of its own.
      const first = session.envelope.rcptTo[0];
      if (first && this.kindOf(session, first.address) !== verdict.kind) {
        return callback(reply(452, '4.5.3 send this recipient in a transaction of its own'));
      }
      if (!first) this.firstRecipients.set(session.id, { address: address.address, kind: verdict.kind });
      return callback();
    }
    this.stats.refusedRecipients++;
    this.options.logger.info(
      { recipient: address.address, remote: session.remoteAddress, answer: `${verdict.code} ${verdict.message}` },
      'recipient refused',
    );
    callback(reply(verdict.code, verdict.message));
  }

  /**
   * The kind of the transaction's first recipient: as found when it was accepted (an own inbound domain is known only
   * then), else inbound when at the inbound domain, else a return path.
   */
  private kindOf(session: SMTPServerSession, address: string): RecipientKind {
    const known = this.firstRecipients.get(session.id);
    if (known?.address === address) return known.kind;
    const domain = address
      .slice(address.lastIndexOf('@') + 1)
      .toLowerCase()
      .replace(/\.$/, '');
    return domain === this.options.config.inboundDomain ? 'inbound' : 'returnPath';
  }

  private onData(
    stream: SMTPServerDataStream,
    session: SMTPServerSession,
    callback: (error?: Error | null, message?: string) => void,
  ): void {
    const max = this.options.config.maxBytes;
    const chunks: Buffer[] = [];
    let kept = 0;
    let answered = false;
    const answer = (error: Error | null, message?: string) => {
      if (answered) return;
      answered = true;
      callback(error, message);
    };
    stream.on('data', (chunk: Buffer) => {
      // Past the limit nothing more is kept: the message is refused once its end arrives.
      if (stream.sizeExceeded || kept + chunk.length > max) return;
      chunks.push(chunk);
      kept += chunk.length;
    });
    stream.once('error', (error) => answer(error));
    stream.once('end', () => {
      if (stream.sizeExceeded || stream.byteLength > max) {
        this.stats.tooLarge++;
        this.options.logger.info(
          { remote: session.remoteAddress, bytes: stream.byteLength, limit: max },
          'message refused: too large',
        );
        return answer(reply(552, `5.3.4 message too big: the limit is ${max} bytes`));
      }
      void this.record(session, Buffer.concat(chunks, kept)).then(
        (receivedId) => answer(null, `2.0.0 Ok: queued as ${receivedId}`),
        () => answer(reply(451, '4.3.0 temporary failure, try again later')),
      );
    });
  }

  /** Appends the message's MailReceived; resolves with its received id once Kafka acknowledged it. */
  private async record(session: SMTPServerSession, raw: Buffer): Promise<string> {
    const started = this.now();
    const mailFrom = session.envelope.mailFrom;
    const command = recordMailReceived(
      {
        envelopeFrom: mailFrom ? mailFrom.address : '',
        envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
        remoteAddress: session.remoteAddress,
        heloName: session.hostNameAppearsAs || '',
        ...(session.envelope.rcptTo[0] &&
          this.kindOf(session, session.envelope.rcptTo[0].address) === 'inbound' && { inbound: true }),
      },
      raw,
      { receivedId: this.newId(), eventId: this.newId() },
      started,
      this.options.tokenKey,
    );
    const { receivedId, messageId, envelopeFrom, envelopeTo } = command.data;
    this.appending.add(session.id);
    try {
      await this.handler.handle(command);
    } catch (error) {
      this.stats.appendFailures++;
      this.options.logger.error(
        { err: error, cause: describeCause(error), receivedId, remote: session.remoteAddress, bytes: raw.length },
        'message not recorded: answered 451',
      );
      throw error;
    } finally {
      this.appending.delete(session.id);
      if (this.stopping) setImmediate(() => this.closeSession(session.id, 421, '4.3.2 Sendline MX shutting down'));
    }
    this.stats.received++;
    this.stats.receivedBytes += raw.length;
    this.options.logger.info(
      {
        receivedId,
        messageId,
        from: envelopeFrom,
        to: envelopeTo,
        bytes: raw.length,
        remote: session.remoteAddress,
        helo: session.hostNameAppearsAs || '',
        appendMs: this.now() - started,
      },
      'mail received',
    );
    return receivedId;
  }
}
