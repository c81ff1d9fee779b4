import type { Socket } from 'node:net';
import { createTCPServer, createUDPServer, Packet } from 'dns2';
import type { DnsHandler, Resource, TCPServer, UDPServer } from 'dns2';
import { InfrastructureError } from '../errors';
import type { ZoneRecord, ZoneSource } from './zone';

/**
 * An authoritative DNS server on loopback for development and tests (dns2), answering TXT and MX
 * queries from a zone (a file re-read on change, or records in memory). It listens on UDP and on TCP
 * at the same port, so a resolver that gets a truncated UDP answer (a DKIM key is longer than 512
 * octets) can ask again over TCP.
 *
 * A name in the zone without records of the asked type answers NOERROR with no records (node:dns:
 * ENODATA); a name not in the zone answers NXDOMAIN (ENOTFOUND); a zone that cannot be read answers
 * SERVFAIL. Answers carry a TTL of 1 second: an edited zone is seen at once.
 */

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const;
const TTL_SECONDS = 1;
const TXT_CHUNK_OCTETS = 255;

export interface DnsServerOptions {
  zone: ZoneSource;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port (the same for UDP and TCP). */
  port?: number;
  /** Called with each query and how it was answered (for a development log). */
  onQuery?: (query: { name: string; type: string; rcode: number; answers: number }) => void;
  /** Called when the zone cannot be read (the query is answered SERVFAIL). */
  onError?: (error: unknown) => void;
}

export interface RunningDnsServer {
  host: string;
  port: number;
  /** `host:port`, as SENDLINE_DNS_SERVERS takes it. */
  address: string;
  close(): Promise<void>;
}

/** A TXT value as character-strings of at most 255 octets each (RFC 1035 §3.3.14). */
export function txtChunks(value: string): Buffer[] {
  const bytes = Buffer.from(value, 'utf8');
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += TXT_CHUNK_OCTETS) chunks.push(bytes.subarray(at, at + TXT_CHUNK_OCTETS));
  return chunks.length > 0 ? chunks : [Buffer.alloc(0)];
}

const TYPE_NAMES: Record<number, string> = {
  [Packet.TYPE.TXT]: 'TXT',
  [Packet.TYPE.MX]: 'MX',
  [Packet.TYPE.ANY]: 'ANY',
};

function answerFrom(record: ZoneRecord, name: string): Resource {
  const base = { name, class: Packet.CLASS.IN, ttl: TTL_SECONDS };
  if (record.type === 'MX') {
    return { ...base, type: Packet.TYPE.MX, exchange: record.value, priority: record.priority ?? 10 } as Resource;
  }
  // dns2 writes each element of `data` as one character-string; Buffers are taken as they are.
  return { ...base, type: Packet.TYPE.TXT, data: txtChunks(record.value) as unknown as string[] } as Resource;
}

function listenUdp(server: UDPServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.bind(port, host, () => {
      server.off('error', onError);
      resolve(server.address().port);
    });
  });
}

function listenTcp(server: TCPServer, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function closeQuietly(udp: UDPServer): void {
  try {
    udp.close();
  } catch {
    // never bound: nothing to close
  }
}

/** Starts the server; resolves once it listens on UDP and TCP. */
export async function startDnsServer(options: DnsServerOptions): Promise<RunningDnsServer> {
  const host = options.host ?? '127.0.0.1';
  const handle: DnsHandler = (request, send) => {
    void (async () => {
      const response = Packet.createResponseFromRequest(request);
      response.header.aa = 1;
      const question = request.questions[0];
      const name = (question?.name ?? '').replace(/\.$/, '').toLowerCase();
      const type = question?.type ?? 0;
      try {
        const atName = (await options.zone.records()).filter((record) => record.name.toLowerCase() === name);
        if (atName.length === 0) {
          response.header.rcode = RCODE.NXDOMAIN;
        } else {
          for (const record of atName) {
            if (type === Packet.TYPE.ANY || TYPE_NAMES[type] === record.type) {
              response.answers.push(answerFrom(record, question?.name ?? name));
            }
          }
        }
      } catch (error) {
        response.header.rcode = RCODE.SERVFAIL;
        options.onError?.(error);
      }
      options.onQuery?.({
        name,
        type: TYPE_NAMES[type] ?? String(type),
        rcode: response.header.rcode,
        answers: response.answers.length,
      });
      await send(response);
    })().catch((error: unknown) => options.onError?.(error));
  };

  // With port 0 the UDP port is picked first and TCP takes the same; another process may hold it on TCP.
  for (let attempt = 1; ; attempt++) {
    const udp = createUDPServer({ type: 'udp4' });
    const tcp = createTCPServer();
    udp.on('request', handle);
    tcp.on('request', handle);
    let port: number;
    try {
      port = await listenUdp(udp, options.port ?? 0, host);
    } catch (cause) {
      closeQuietly(udp);
      throw new InfrastructureError(
        'DnsServerListenFailed',
        `cannot listen on UDP ${host}:${options.port ?? 0}: ${(cause as Error).message}`,
        {
          retriable: false,
          cause,
        },
      );
    }
    try {
      await listenTcp(tcp, port, host);
    } catch (cause) {
      closeQuietly(udp);
      if (!options.port && attempt < 5) continue;
      throw new InfrastructureError(
        'DnsServerListenFailed',
        `cannot listen on TCP ${host}:${port}: ${(cause as Error).message}`,
        {
          retriable: false,
          cause,
        },
      );
    }
    // After start, a failed reply is the client's loss, not a reason to stop the server.
    udp.on('error', (error: Error) => options.onError?.(error));
    tcp.on('error', (error: Error) => options.onError?.(error));
    const connections = new Set<Socket>();
    tcp.on('connection', (socket: Socket) => {
      connections.add(socket);
      socket.once('close', () => connections.delete(socket));
    });
    return {
      host,
      port,
      address: `${host}:${port}`,
      close: async () => {
        for (const socket of connections) socket.destroy();
        await Promise.all([
          new Promise<void>((resolve) => udp.close(() => resolve())),
          new Promise<void>((resolve) => tcp.close(() => resolve())),
        ]);
      },
    };
  }
}
