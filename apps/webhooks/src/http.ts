import { lookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, request } from 'undici';

/**
 * One HTTP call to a webhook: a POST of the body with the given headers, answered within `timeoutMs` (10 s) or
 * abandoned, redirects not followed (a 3xx is a failure like any non-2xx), at most `maxAnswerBytes` (64 kB) of the
 * answer read. Where it may connect is checked when it connects: every address the host resolves to must pass
 * `addressAllowed` (public addresses only, outside development), and the connection goes to the checked address,
 * so a name that resolves to a public address at creation and to a private one now (DNS rebinding) is refused.
 */
export interface CallResult {
  ok: boolean;
  status?: number;
  latencyMs: number;
  /** The start of the answer's body, as text. */
  answer: string;
  error?: string;
}

export interface WebhookHttpOptions {
  timeoutMs: number;
  maxAnswerBytes: number;
  /** Connections at most per origin (scheme, host and port), shared by the webhooks on it. */
  connectionsPerOrigin: number;
  /** Whether a resolved address may be connected to (the SSRF rule); undefined: every address (development). */
  addressAllowed?: (address: string) => boolean;
}

export const ANSWER_EXCERPT_CHARS = 1000;

export class AddressRefusedError extends Error {
  readonly code = 'WebhookAddressRefused';
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, which is not a public address: the call is refused`);
  }
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

export class WebhookHttp {
  private readonly agent: Agent;

  constructor(private readonly options: WebhookHttpOptions) {
    const allowed = options.addressAllowed;
    this.agent = new Agent({
      connections: options.connectionsPerOrigin,
      keepAliveTimeout: 30_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: {
        timeout: options.timeoutMs,
        ...(allowed && {
          lookup: (hostname: string, lookupOptions: LookupOptions, callback: LookupCallback) => {
            lookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
              if (error) return callback(error, []);
              const refused = addresses.find((entry) => !allowed(entry.address));
              if (refused) return callback(new AddressRefusedError(hostname, refused.address), []);
              if (lookupOptions.all) return callback(null, addresses);
              const first = addresses[0]!;
              callback(null, first.address, first.family);
            });
          },
        }),
      },
    });
  }

  async call(url: string, headers: Record<string, string>, body: string): Promise<CallResult> {
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    try {
      const target = new URL(url);
      // An address written in the URL is connected to without a lookup: checked here.
      const literal = target.hostname.replace(/^\[|\]$/g, '');
      if (this.options.addressAllowed && isIP(literal) && !this.options.addressAllowed(literal)) {
        throw new AddressRefusedError(target.hostname, literal);
      }
      const signal = AbortSignal.timeout(this.options.timeoutMs);
      const response = await request(target, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.agent,
        signal,
      });
      const answer = await readAtMost(response.body, this.options.maxAnswerBytes);
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return {
        ok,
        status: response.statusCode,
        latencyMs: latency(),
        answer: answer.slice(0, ANSWER_EXCERPT_CHARS),
        ...(!ok && { error: `answered ${response.statusCode}` }),
      };
    } catch (error) {
      return { ok: false, latencyMs: latency(), answer: '', error: describe(error, this.options.timeoutMs) };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** Reads a body up to `limit` bytes, then drops the connection's rest: a huge answer costs no more than that. */
async function readAtMost(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

function describe(error: unknown, timeoutMs: number): string {
  const name = (error as { name?: string })?.name;
  if (name === 'TimeoutError' || name === 'AbortError' || (error as { code?: string })?.code?.includes('TIMEOUT')) {
    return `no answer within ${timeoutMs / 1000} s`;
  }
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    if (current instanceof AddressRefusedError) return current.message;
    current = (current as { cause?: unknown }).cause;
  }
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const message = error instanceof Error ? error.message : String(error);
  return cause?.code ? `${message} (${cause.code})` : message;
}
