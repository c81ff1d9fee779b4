import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { withAdmin, type EventStore } from '@sendline/infra';
import { createHmac, timingSafeEqual } from 'node:crypto';

/** A request a receiver got: its headers, its body (text and parsed), when. */
export interface ReceivedCall {
  headers: IncomingHttpHeaders;
  /** The caller's end of the connection (its port on 127.0.0.1): which process made the call (connectionOwner). */
  remotePort: number;
  body: string;
  json: Record<string, any>;
  at: number;
}

/** How the receiver answers a request: a status (and body), or never (`'hang'`). */
export type Answer = number | 'hang' | { status: number; body: string };

/** A real HTTP server on 127.0.0.1 that records every call and answers as `answer` says. */
export class Receiver {
  readonly calls: ReceivedCall[] = [];
  private readonly hanging = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(
    answer: (call: ReceivedCall, calls: readonly ReceivedCall[]) => Answer = () => 200,
  ): Promise<Receiver> {
    const holder: { receiver?: Receiver } = {};
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: Record<string, any> = {};
        try {
          json = JSON.parse(body) as Record<string, any>;
        } catch {
          // recorded as it came
        }
        const call: ReceivedCall = {
          headers: request.headers,
          remotePort: request.socket.remotePort ?? 0,
          body,
          json,
          at: Date.now(),
        };
        const receiver = holder.receiver!;
        receiver.calls.push(call);
        const how = answer(call, receiver.calls);
        if (how === 'hang') {
          receiver.hanging.add(response);
          response.on('close', () => receiver.hanging.delete(response));
          return;
        }
        const { status, body: text } = typeof how === 'number' ? { status: how, body: 'ok' } : how;
        response.writeHead(status, { 'content-type': 'text/plain' }).end(text);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    holder.receiver = new Receiver(server, `http://127.0.0.1:${port}/hooks`);
    return holder.receiver;
  }

  /** The calls about a message (by MessageID) or an address (by Recipient or Email). */
  about(key: string): ReceivedCall[] {
    return this.calls.filter(
      (call) => call.json.MessageID === key || call.json.Recipient === key || call.json.Email === key,
    );
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Whether a call's Webhook-Signature is right, checked as a receiver would (docs/webhooks.md's snippet, written
 * apart from the service's code): HMAC-SHA256 of `id.timestamp.body` with the secret's bytes, base64, after `v1,`.
 */
export function signatureValid(call: ReceivedCall, secret: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signed = `${call.headers['webhook-id']}.${call.headers['webhook-timestamp']}.${call.body}`;
  const expected = Buffer.from(`v1,${createHmac('sha256', key).update(signed).digest('base64')}`);
  return String(call.headers['webhook-signature'] ?? '')
    .split(' ')
    .some((candidate) => candidate.length === expected.length && timingSafeEqual(Buffer.from(candidate), expected));
}

/** Deletes every topic whose name starts with `prefix` (a test's topics, its retry and dead-letter topics). */
export async function deleteTopicsUnder(store: EventStore, prefix: string): Promise<void> {
  await withAdmin(store.kafka, async (admin) => {
    const mine = (await admin.listTopics()).filter((topic) => topic.startsWith(prefix));
    if (mine.length > 0) await admin.deleteTopics({ topics: mine }).catch(() => undefined);
  });
}

/**
 * The process among `pids` that holds the loopback TCP connection from `localPort` to `remotePort` (Linux: the
 * socket's inode in /proc/net/tcp, then the process whose file descriptors name it); undefined when none does (the
 * process is gone, or the connection closed). Reads the system's tables: for a few connections, not per request.
 */
export function connectionOwner(localPort: number, remotePort: number, pids: readonly number[]): number | undefined {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  let inode: string | undefined;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let rows: string[];
    try {
      rows = readFileSync(table, 'utf8').split('\n').slice(1);
    } catch {
      continue;
    }
    for (const row of rows) {
      const fields = row.trim().split(/\s+/);
      if (fields.length < 10) continue;
      if (fields[1]!.endsWith(`:${hex(localPort)}`) && fields[2]!.endsWith(`:${hex(remotePort)}`)) inode = fields[9];
    }
    if (inode) break;
  }
  if (!inode || inode === '0') return undefined;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}
