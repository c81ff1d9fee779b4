import cluster, { type Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { AggregatorRegistry, type Registry } from 'prom-client';

/**
 * The API runs as a primary process and SENDLINE_API_WORKERS worker processes sharing the port
 * (node:cluster; by default one per core, at least two). The primary only starts the workers (with the API's
 * V8 flags), starts another at once when one dies, passes a stop signal on and exits once they have drained,
 * and sums the workers' metrics, so that `/metrics`, answered by whichever worker took the scrape, shows the
 * whole API.
 *
 * The primary holds the listening socket and hands each connection to a worker in turn, so a worker's death
 * loses only the connections inside it: the others keep serving on the same socket, and connections waiting
 * in the primary go to them. node:cluster closes the socket when its last worker is gone, though: with
 * SENDLINE_API_WORKERS=1, connections are refused from the only worker's death until its replacement
 * listens (docs/api.md, "The API process and its workers").
 */

/**
 * V8 flags of the API's workers. A larger young generation: a batch of 500 messages allocates a lot that
 * dies young, and with the default the scavenger runs so often that batches reached about 10,000 accepted
 * messages/s on this machine, 12,900 with this (and 20,000 → 26,500 with two workers; `npm run bench:api`).
 */
export const API_NODE_FLAGS = ['--max-semi-space-size=64'];

/**
 * A worker that dies this soon after it started counts as a failed start; one that has listened this long
 * has started well, and the count of failed starts begins again.
 */
const QUICK_DEATH_MS = 10_000;
/** Failed starts in a row after which the primary gives up (the cause is in the workers' log). */
const MAX_FAILED_STARTS = 5;
/** How long the workers have to drain after a stop signal before the primary kills them (and exits 1). */
const DRAIN_DEADLINE_MS = 30_000;

const METRICS_REQUEST = 'sendline:metrics';
const METRICS_ANSWER = 'sendline:metrics-answer';

interface MetricsRequest {
  type: typeof METRICS_REQUEST;
  id: string;
}
interface MetricsAnswer {
  type: typeof METRICS_ANSWER;
  id: string;
  text?: string;
  error?: string;
}

/**
 * The number of API worker processes: SENDLINE_API_WORKERS, or by default one per core and at least two (so
 * that a worker's death never leaves the port without a worker). Throws on anything but a whole number ≥ 1.
 */
export function apiWorkersFromEnv(env: NodeJS.ProcessEnv = process.env, cores = availableParallelism()): number {
  const raw = env.SENDLINE_API_WORKERS?.trim();
  if (!raw) return Math.max(2, cores);
  const workers = Number(raw);
  if (!/^\d+$/.test(raw) || workers < 1) {
    throw new Error(`SENDLINE_API_WORKERS must be a whole number ≥ 1, not "${raw}"`);
  }
  return workers;
}

interface Connection {
  close(...args: unknown[]): unknown;
}

/**
 * Connections the primary is handing to a worker. node:cluster passes each connection to a worker through its IPC
 * channel and closes its own copy once the worker answers that it took it (or hands it to another worker when
 * this one is closing); when the worker dies before answering, nothing closes that copy and the client waits for
 * an answer that never comes, until its own timeout (a known node:cluster limit). Closing those copies when the
 * worker dies drops the connections at once, as the ones inside the worker are, so their clients retry. This
 * watches node:cluster's internal handoff ("newconn" with the connection, answered by an "ack" of its sequence
 * number); should that change, it finds nothing and changes nothing.
 */
class PendingHandoffs {
  /** Each connection handed to a worker that has not answered yet, with the handoff's sequence number. */
  private readonly pending = new Map<Connection, { worker: Worker; seq: unknown }>();
  private readonly wrapped = new WeakSet<Connection>();

  /** Notes every connection handed to `worker` until the worker answers. */
  watch(worker: Worker): Worker {
    const channel = worker.process;
    const send = channel.send.bind(channel) as (...args: unknown[]) => boolean;
    channel.send = ((message: unknown, handle?: unknown, ...rest: unknown[]) => {
      if (isHandoff(message) && isConnection(handle)) this.hold(handle, worker, message.seq);
      return send(message, handle, ...rest);
    }) as typeof channel.send;
    // Registered after node:cluster's own listener: a connection it hands on to another worker is noted first.
    channel.on('internalMessage', (message: unknown) => {
      const ack = ackOf(message);
      if (ack === undefined) return;
      for (const [connection, handoff] of this.pending) {
        if (handoff.worker === worker && handoff.seq === ack) this.pending.delete(connection);
      }
    });
    return worker;
  }

  /** Closes the connections `worker` (dead) never answered for; returns how many. */
  closeLostWith(worker: Worker): number {
    let closed = 0;
    for (const [connection, handoff] of this.pending) {
      if (handoff.worker !== worker) continue;
      connection.close();
      closed++;
    }
    return closed;
  }

  private hold(connection: Connection, worker: Worker, seq: unknown): void {
    if (!this.wrapped.has(connection)) {
      // Closed once, whoever closes it first (node:cluster, or closeLostWith).
      this.wrapped.add(connection);
      const close = connection.close.bind(connection);
      let closed = false;
      connection.close = (...args: unknown[]) => {
        this.pending.delete(connection);
        if (closed) return undefined;
        closed = true;
        return close(...args);
      };
    }
    this.pending.set(connection, { worker, seq });
  }
}

const isHandoff = (message: unknown): message is { seq: unknown } =>
  typeof message === 'object' &&
  message !== null &&
  (message as { cmd?: unknown }).cmd === 'NODE_CLUSTER' &&
  (message as { act?: unknown }).act === 'newconn';

const ackOf = (message: unknown): unknown =>
  typeof message === 'object' && message !== null && (message as { cmd?: unknown }).cmd === 'NODE_CLUSTER'
    ? (message as { ack?: unknown }).ack
    : undefined;

const isConnection = (handle: unknown): handle is Connection =>
  typeof handle === 'object' && handle !== null && typeof (handle as Connection).close === 'function';

/**
 * Runs as the primary of `count` workers until a stop signal; then exits 0 once every worker has drained (1
 * when one did not drain within DRAIN_DEADLINE_MS, or when the workers kept dying right after starting).
 */
export function runPrimary(count: number, log: (fields: Record<string, unknown>) => void): void {
  const flags = API_NODE_FLAGS.filter(
    (flag) => !process.execArgv.some((given) => given.startsWith(flag.split('=')[0]!)),
  );
  cluster.setupPrimary({ execArgv: [...process.execArgv, ...flags] });
  const aggregator = new AggregatorRegistry();
  const startedAt = new Map<Worker, number>();
  // A worker that just exited may still be listed until its IPC channel closes.
  const alive = () =>
    Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => !!worker && !worker.isDead());
  let failedStarts = 0;
  let stopping = false;
  const handoffs = new PendingHandoffs();
  const fork = () => startedAt.set(handoffs.watch(cluster.fork()), Date.now());
  for (let i = 0; i < count; i++) fork();

  cluster.on('listening', (worker) => {
    log({ level: 'info', msg: 'API worker listening', pid: worker.process.pid, workers: alive().length });
    setTimeout(() => {
      if (!worker.isDead()) failedStarts = 0;
    }, QUICK_DEATH_MS).unref();
  });
  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    const connectionsClosed = handoffs.closeLostWith(worker);
    startedAt.delete(worker);
    if (stopping) {
      // 0 after a stop signal; 1 when the primary gave up or a worker did not drain (process.exitCode).
      if (alive().length === 0) process.exit();
      return;
    }
    failedStarts = lived < QUICK_DEATH_MS ? failedStarts + 1 : 0;
    if (failedStarts >= MAX_FAILED_STARTS) {
      log({ level: 'fatal', msg: `API workers died ${failedStarts} times in a row right after starting; giving up` });
      stopping = true;
      for (const other of alive()) other.process.kill('SIGTERM');
      process.exitCode = 1;
      if (alive().length === 0) process.exit(1);
      return;
    }
    // A death is replaced at once; only deaths in a row right after starting wait, longer each time.
    const delayMs = failedStarts <= 1 ? 0 : Math.min(30_000, 250 * 2 ** (failedStarts - 1));
    const left = alive().length;
    log({
      level: 'error',
      msg:
        left > 0
          ? 'API worker exited; starting another'
          : 'API worker exited; starting another (no worker left: connections are refused until it listens)',
      pid: worker.process.pid,
      code,
      signal,
      workersLeft: left,
      connectionsClosed,
      delayMs,
    });
    if (delayMs === 0) fork();
    else setTimeout(() => !stopping && fork(), delayMs);
  });
  cluster.on('message', (worker, message: MetricsRequest | undefined) => {
    if (message?.type !== METRICS_REQUEST) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: METRICS_ANSWER, id: message.id, text } satisfies MetricsAnswer),
      (error: unknown) =>
        worker.send({ type: METRICS_ANSWER, id: message.id, error: String(error) } satisfies MetricsAnswer),
    );
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const workers = alive();
    if (workers.length === 0) process.exit();
    log({ level: 'info', msg: 'draining the API workers', signal, workers: workers.length });
    // Each worker stops taking connections, finishes the requests in flight, then exits.
    for (const worker of workers) worker.process.kill(signal);
    setTimeout(() => {
      const late = alive();
      log({
        level: 'fatal',
        msg: `${late.length} API workers did not drain within ${DRAIN_DEADLINE_MS} ms; killing them`,
      });
      process.exitCode = 1;
      for (const worker of late) worker.process.kill('SIGKILL');
    }, DRAIN_DEADLINE_MS).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/**
 * The metrics to show: this process's registry alone (outside a cluster: tests, buildApi on its own), or,
 * in a worker, every worker's summed by the primary.
 */
export function clusterAwareMetrics(registry: Registry): () => Promise<string> {
  if (!cluster.isWorker) return () => registry.metrics();
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry(); // answers the primary's requests for this worker's metrics
  const waiting = new Map<string, { resolve: (text: string) => void; reject: (error: Error) => void }>();
  process.on('message', (message: MetricsAnswer | undefined) => {
    if (message?.type !== METRICS_ANSWER) return;
    const pending = waiting.get(message.id);
    if (!pending) return;
    waiting.delete(message.id);
    if (message.text !== undefined) pending.resolve(message.text);
    else pending.reject(new Error(`metrics of the other workers: ${message.error ?? 'no answer'}`));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = randomUUID();
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('the other workers did not report their metrics within 5 s'));
      }, 5000);
      waiting.set(id, {
        resolve: (text) => (clearTimeout(timer), resolve(text)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      process.send!({ type: METRICS_REQUEST, id } satisfies MetricsRequest);
    });
}
