import cluster, { type Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, type Registry } from 'prom-client';

/**
 * The API runs as a primary process and SENDLINE_API_WORKERS worker processes sharing the port
 * (node:cluster). The primary only starts the workers (with the API's V8 flags), starts another when one
 * dies, passes a stop signal on and exits once they have drained, and sums the workers' metrics, so that
 * `/metrics`, answered by whichever worker took the scrape, shows the whole API.
 */

/**
 * V8 flags of the API's workers. A larger young generation: a batch of 500 messages allocates a lot that
 * dies young, and with the default the scavenger runs so often that batches reached about 10,000 accepted
 * messages/s on this machine, 12,900 with this (and 20,000 → 26,500 with two workers; `npm run bench:api`).
 */
export const API_NODE_FLAGS = ['--max-semi-space-size=64'];

/** A worker that dies this soon after it started counts as a failed start. */
const QUICK_DEATH_MS = 10_000;
/** Failed starts in a row after which the primary gives up (the cause is in the workers' log). */
const MAX_FAILED_STARTS = 5;

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

/** The number of API worker processes from SENDLINE_API_WORKERS (default 1); throws on anything but a whole number ≥ 1. */
export function apiWorkersFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SENDLINE_API_WORKERS?.trim() || '1';
  const workers = Number(raw);
  if (!/^\d+$/.test(raw) || workers < 1) {
    throw new Error(`SENDLINE_API_WORKERS must be a whole number ≥ 1, not "${raw}"`);
  }
  return workers;
}

/** Runs as the primary of `count` workers until a stop signal; then exits once every worker has drained. */
export function runPrimary(count: number, log: (fields: Record<string, unknown>) => void): void {
  const flags = API_NODE_FLAGS.filter(
    (flag) => !process.execArgv.some((given) => given.startsWith(flag.split('=')[0]!)),
  );
  cluster.setupPrimary({ execArgv: [...process.execArgv, ...flags] });
  const aggregator = new AggregatorRegistry();
  const startedAt = new Map<Worker, number>();
  let failedStarts = 0;
  let stopping = false;
  const fork = () => startedAt.set(cluster.fork(), Date.now());
  for (let i = 0; i < count; i++) fork();

  cluster.on('listening', () => (failedStarts = 0));
  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    if (stopping) {
      // 0 after a stop signal; 1 when the primary gave up (process.exitCode).
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit();
      return;
    }
    failedStarts = lived < QUICK_DEATH_MS ? failedStarts + 1 : 0;
    if (failedStarts >= MAX_FAILED_STARTS) {
      log({ level: 'fatal', msg: `API workers died ${failedStarts} times in a row right after starting; giving up` });
      stopping = true;
      for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGTERM');
      process.exitCode = 1;
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(1);
      return;
    }
    const delayMs = failedStarts === 0 ? 0 : Math.min(30_000, 250 * 2 ** failedStarts);
    log({ level: 'error', msg: 'API worker exited; starting another', pid: worker.process.pid, code, signal, delayMs });
    setTimeout(() => !stopping && fork(), delayMs);
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
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
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
