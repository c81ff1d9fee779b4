import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import type { ServiceAddresses } from '@sendline/infra';

/**
 * The tools the fault tests share: the apps started as their users start them (their `main.ts`, with the
 * addresses of the services in the environment), a keyed load that retries the way docs/api.md advises
 * (the same Idempotency-Key after a 503, a timeout or a dropped connection), and the counts every fault
 * test reports (lost, delivered twice, answers by status).
 */

/** The environment an app needs to run against `services` (a private stack, or the shared one). */
export function appEnvironment(services: ServiceAddresses, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    KAFKA_BROKERS: services.kafkaBrokers.join(','),
    SCHEMA_REGISTRY_URL: services.schemaRegistryUrl,
    CLICKHOUSE_URL: services.clickhouseUrl,
    CLICKHOUSE_DATABASE: services.clickhouseDatabase,
    REDIS_URL: services.redisUrl,
    LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? 'warn',
    ...extra,
  };
}

/** One app process (`apps/<name>/src/main.ts`), its output kept for the test's failure messages. */
export class AppProcess {
  output = '';
  /** The app's own log lines (kafkajs's connection noise, which can fill `output` during an outage, left out). */
  ownOutput = '';
  private child: ChildProcess | undefined;
  private readonly lineListeners = new Set<(line: string) => void>();

  constructor(
    readonly name: string,
    private readonly entry: string,
    private readonly env: () => NodeJS.ProcessEnv,
  ) {}

  start(): this {
    const child = spawn(process.execPath, ['--import', 'tsx', this.entry], {
      env: this.env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      const text = chunk.toString();
      this.output = (this.output + text).slice(-20_000);
      const own = text
        .split('\n')
        .filter((line) => line && !line.includes('"logger":"kafkajs"'))
        .join('\n');
      if (own) this.ownOutput = `${this.ownOutput}${own}\n`.slice(-20_000);
      if (own) for (const line of own.split('\n')) for (const listener of this.lineListeners) listener(line);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    this.child = child;
    return this;
  }

  /**
   * Calls `listener` with each of the app's own log lines as it arrives (a line split between two reads may come as
   * two pieces), until the returned function is called: a test can act the moment the app says it did something.
   */
  onLine(listener: (line: string) => void): () => void {
    this.lineListeners.add(listener);
    return () => this.lineListeners.delete(listener);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Sends `signal` and waits for the process to be gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await gone;
  }
}

export const apiApp = (env: () => NodeJS.ProcessEnv) => new AppProcess('api', 'apps/api/src/main.ts', env);
export const senderApp = (env: () => NodeJS.ProcessEnv) => new AppProcess('sender', 'apps/sender/src/main.ts', env);
export const projectorApp = (env: () => NodeJS.ProcessEnv) =>
  new AppProcess('projector', 'apps/projector/src/main.ts', env);

/**
 * Polls `check` every 100 ms until it is true, or fails naming `what` — a function when what it says (a process's
 * output so far, say) is to be read at the failure, not at the start.
 */
export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string | (() => string),
) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await Promise.resolve(check()).catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}`);
}

/**
 * The longest window docs/sender.md documents ("The window, measured"): a killed sender re-sends only what a server
 * answered 250 at most this long before the kill. The median is a couple of milliseconds; this bound is the tail seen
 * on a two-core machine shared by Kafka, Redis, ClickHouse, the apps and the tests, whose scheduler alone stalls an
 * idle process for up to ~170 ms at such moments.
 */
export const GUARD_WINDOW_MS = 350;

/**
 * When a mail server answered 250 to each copy of each (message, recipient), in ms with decimals. Each recipient is
 * its own SMTP transaction (its own envelope sender, docs/returns.md), so a copy is one recipient's, not the
 * message's: a message to two recipients is answered twice without being sent twice.
 */
export class AnsweredCopies {
  private readonly at = new Map<string, number[]>();

  /** Records a 250: call it from the test mail server's onMessage, which runs right before the answer. */
  record(message: { messageId?: string; recipients: readonly string[] }, answeredAt: number): void {
    const id = /<([^@>]+)@/.exec(message.messageId ?? '')?.[1];
    if (!id) return;
    for (const recipient of message.recipients) {
      const key = `${id} ${recipient.toLowerCase()}`;
      this.at.set(key, [...(this.at.get(key) ?? []), answeredAt]);
    }
  }

  /** The answers to one recipient of a message, in order. */
  of(messageId: string, recipient: string): number[] {
    return this.at.get(`${messageId} ${recipient.toLowerCase()}`) ?? [];
  }

  /** How many of a message's recipients were answered at least once. */
  recipientsAnswered(messageId: string): number {
    return [...this.at.keys()].filter((key) => key.startsWith(`${messageId} `)).length;
  }

  /** Every (message, recipient) answered more than once: how often, and how long before `killedAt` the first was. */
  copiedTwice(killedAt: number): { id: string; copies: number; beforeKillMs: number }[] {
    return [...this.at]
      .filter(([, answers]) => answers.length > 1)
      .map(([id, answers]) => ({ id, copies: answers.length, beforeKillMs: killedAt - answers[0]! }));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function readyz(baseUrl: string): Promise<number> {
  const root = baseUrl.replace(/\/v1$/, '');
  const response = await fetch(`${root}/readyz`, { signal: AbortSignal.timeout(3000) }).catch(() => undefined);
  return response?.status ?? 0;
}

export interface Answer {
  /** HTTP status, or 0 when no answer came (refused, reset, timed out). */
  status: number;
  body: any;
  /** The transport failure when status is 0 (e.g. ECONNREFUSED, ECONNRESET, timeout). */
  failure?: string;
  /** The Retry-After header, in seconds, when there is one. */
  retryAfter?: number;
  at: number;
  ms: number;
  /** Where the request went, when the load had several copies of the API (`KeyedLoadOptions.otherBaseUrls`). */
  baseUrl?: string;
}

/** One POST on a connection of its own (so a dead worker's connections are not reused). */
export function post(
  baseUrl: string,
  path: string,
  apiKey: string,
  body: unknown,
  headers: Record<string, string> = {},
  timeoutMs = 15_000,
): Promise<Answer> {
  const url = new URL(`${baseUrl}${path}`);
  const text = JSON.stringify(body);
  const started = Date.now();
  return new Promise((resolve) => {
    const done = (answer: Omit<Answer, 'at' | 'ms'>) => resolve({ ...answer, at: started, ms: Date.now() - started });
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent: false,
        timeout: timeoutMs,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
          authorization: `Bearer ${apiKey}`,
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error) => done({ status: 0, body: null, failure: (error as NodeJS.ErrnoException).code }));
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString();
          let parsed: unknown = raw;
          try {
            parsed = JSON.parse(raw);
          } catch {
            // kept as text
          }
          const retryAfter = res.headers['retry-after'];
          done({
            status: res.statusCode ?? 0,
            body: parsed,
            ...(retryAfter !== undefined ? { retryAfter: Number(retryAfter) } : {}),
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (error) =>
      done({ status: 0, body: null, failure: (error as NodeJS.ErrnoException).code ?? 'error' }),
    );
    req.end(text);
  });
}

export interface KeyedSend {
  key: string;
  body: Record<string, unknown>;
  /** Every answer, in order. */
  answers: Answer[];
  /** The MessageID of the 200, once there is one. */
  messageId?: string;
}

export interface KeyedLoadOptions {
  baseUrl: string;
  /**
   * Other copies of the API: after an attempt that got no answer (refused, reset, timed out) the send's next attempt
   * goes to the next copy, with the same key, as a load balancer that drops a dead backend does. Each answer then
   * says which copy gave it.
   */
  otherBaseUrls?: string[];
  apiKey: string;
  /** How many sends (each with its own Idempotency-Key). */
  count: number;
  /** Sends started per second. */
  ratePerSecond: number;
  message: (index: number) => Record<string, unknown>;
  /** Retry 503s, 5xx and transport failures with the same key until this long after the last send started. */
  retryForMs: number;
  /** Pause between two attempts of one send (default 500 ms; a Retry-After header is honoured). */
  retryDelayMs?: number;
  /** How long one attempt waits for its answer before it counts as a transport failure (default 15 s). */
  requestTimeoutMs?: number;
  /**
   * At most this many sends unanswered at once (default: no bound). With a bound the load is offered at
   * `ratePerSecond` while the service keeps up, and at the pace of its answers when it does not: on a slower or
   * busier machine the sends wait in this process, not in the API's queue, so no answer waits for the requests
   * queued before it until the client gives up.
   */
  maxInFlight?: number;
}

/**
 * A bounded keyed load on loopback, open-loop unless `maxInFlight` bounds it: `count` sends at `ratePerSecond`, each retried with its own
 * key, as docs/api.md advises, after a 503, another 5xx or a transport failure, until it gets an answer
 * below 500 or `retryForMs` runs out.
 */
export async function keyedLoad(options: KeyedLoadOptions): Promise<KeyedSend[]> {
  const sends: KeyedSend[] = [];
  const running: Promise<void>[] = [];
  const inFlight = new Set<Promise<void>>();
  const start = Date.now();
  let stopRetryingAt = start + (options.count / options.ratePerSecond) * 1000 + options.retryForMs;
  for (let i = 0; i < options.count; i++) {
    const due = start + (i * 1000) / options.ratePerSecond;
    if (due > Date.now()) await sleep(due - Date.now());
    while (options.maxInFlight !== undefined && inFlight.size >= options.maxInFlight) await Promise.race(inFlight);
    // Held back by the bound, the load ends later than planned: the retries' window moves with it.
    stopRetryingAt = Math.max(stopRetryingAt, Date.now() + options.retryForMs);
    const send: KeyedSend = { key: randomUUID(), body: options.message(i), answers: [] };
    sends.push(send);
    const copies = [options.baseUrl, ...(options.otherBaseUrls ?? [])];
    let copy = 0;
    const sending = (async () => {
      for (;;) {
        const baseUrl = copies[copy]!;
        const answer = await post(
          baseUrl,
          '/email',
          options.apiKey,
          send.body,
          { 'Idempotency-Key': send.key },
          options.requestTimeoutMs,
        );
        send.answers.push(copies.length > 1 ? { ...answer, baseUrl } : answer);
        if (answer.status === 0) copy = (copy + 1) % copies.length;
        if (answer.status === 200) send.messageId = answer.body.MessageID;
        if (answer.status !== 0 && answer.status < 500) return;
        if (Date.now() > stopRetryingAt) return;
        await sleep(Math.max(options.retryDelayMs ?? 500, (answer.retryAfter ?? 0) * 1000));
      }
    })();
    inFlight.add(sending);
    void sending.finally(() => inFlight.delete(sending));
    running.push(sending);
  }
  await Promise.all(running);
  return sends;
}

/** What a keyed load saw, for a test's figures. */
export function summarize(sends: readonly KeyedSend[]) {
  const byStatus: Record<string, number> = {};
  const failures: Record<string, number> = {};
  let slowest = 0;
  for (const send of sends) {
    for (const answer of send.answers) {
      byStatus[answer.status] = (byStatus[answer.status] ?? 0) + 1;
      if (answer.failure) failures[answer.failure] = (failures[answer.failure] ?? 0) + 1;
      if (answer.status >= 500) slowest = Math.max(slowest, answer.ms);
    }
  }
  const accepted = sends.filter((send) => send.messageId !== undefined);
  return {
    sends: sends.length,
    accepted: accepted.length,
    retried: sends.filter((send) => send.answers.length > 1).length,
    unanswered: sends.filter((send) => send.messageId === undefined).length,
    distinctMessageIds: new Set(accepted.map((send) => send.messageId)).size,
    answersByStatus: byStatus,
    transportFailures: failures,
    slowestErrorAnswerMs: slowest,
  };
}

/** Every 5xx answer is Postmark-style: an ErrorCode and a Message, never a bare 500. */
export function errorAnswersOf(sends: readonly KeyedSend[]): Answer[] {
  return sends.flatMap((send) => send.answers.filter((answer) => answer.status >= 500));
}
