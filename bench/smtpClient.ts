/**
 * The sending side of the SMTP benchmarks: a remote server handing mail to our MX over one connection, without the
 * cost of building each message (its DATA is ready beforehand), so that the client's CPU stays small beside the
 * MX's on a machine of few cores.
 */
import { connect, type Socket } from 'node:net';

/** A message as DATA sends it: dot-stuffed (RFC 5321 4.5.2), ending with CRLF.CRLF. */
export function dataOf(raw: Buffer): Buffer {
  const stuffed = raw.toString('latin1').replace(/(^|\r\n)\./g, '$1..');
  return Buffer.from(`${stuffed}${stuffed.endsWith('\r\n') ? '' : '\r\n'}.\r\n`, 'latin1');
}

/** One SMTP reply: its code and its text lines joined. */
export interface Reply {
  code: number;
  text: string;
}

/**
 * The client side of a remote server sending us its reports over one connection: EHLO once, then per message MAIL
 * FROM:<>, RCPT TO and DATA, written together when `pipelining` (RFC 2920, as Postfix does when the server
 * announces PIPELINING, which ours does) or one at a time, then the message. Only what the benchmark needs: one
 * recipient, no TLS, no retry.
 */
export class SmtpClient {
  private buffer = '';
  private readonly replies: Reply[] = [];
  private readonly waiters: ((reply: Reply) => void)[] = [];

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.setNoDelay(true);
    socket.on('data', (chunk: string) => this.read(chunk));
    socket.on('error', () => undefined);
  }

  static async open(port: number): Promise<SmtpClient> {
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const client = new SmtpClient(socket);
    const greeting = await client.reply();
    if (greeting.code !== 220) throw new Error(`the MX greeted ${greeting.code} ${greeting.text}`);
    const ehlo = await client.command('EHLO mx.dest.example.net');
    if (ehlo.code !== 250) throw new Error(`the MX answered EHLO ${ehlo.code} ${ehlo.text}`);
    return client;
  }

  private read(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    let text = '';
    while ((end = this.buffer.indexOf('\r\n')) >= 0) {
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      text += (text ? '\n' : '') + line.slice(4);
      if (line[3] === '-') continue;
      const reply = { code: Number(line.slice(0, 3)), text };
      text = '';
      const waiter = this.waiters.shift();
      if (waiter) waiter(reply);
      else this.replies.push(reply);
    }
  }

  private reply(): Promise<Reply> {
    const queued = this.replies.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private command(line: string): Promise<Reply> {
    this.socket.write(`${line}\r\n`);
    return this.reply();
  }

  /**
   * One message to `to` from `from` (default the null reverse path of a report); `onData` is called as DATA is
   * written. The reply to the message's end, or the refusal.
   */
  async send(to: string, data: Buffer, pipelining: boolean, onData: () => void, from = ''): Promise<Reply> {
    let replies: Reply[];
    if (pipelining) {
      onData();
      this.socket.write(`MAIL FROM:<${from}>\r\nRCPT TO:<${to}>\r\nDATA\r\n`);
      replies = [await this.reply(), await this.reply(), await this.reply()];
    } else {
      replies = [await this.command(`MAIL FROM:<${from}>`), await this.command(`RCPT TO:<${to}>`)];
      if (replies.every((reply) => reply.code === 250)) {
        onData();
        replies.push(await this.command('DATA'));
      }
    }
    const refusal = replies.find((reply) => reply.code !== 250 && reply.code !== 354);
    if (refusal || replies.length < 3) {
      // A DATA taken after a refused RCPT (pipelining) gets an empty message, which the server refuses.
      if (replies[2]?.code === 354) await this.command('.');
      await this.command('RSET');
      return refusal ?? replies.at(-1)!;
    }
    this.socket.write(data);
    return this.reply();
  }

  async quit(): Promise<void> {
    await this.command('QUIT');
    this.socket.destroy();
  }
}
