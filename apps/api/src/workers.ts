import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, type Registry } from 'prom-client';

/**
 * Several API processes on one port (node:cluster, SENDLINE_API_WORKERS): the primary process only starts
 * the workers, starts another when one dies, passes a stop signal on, and sums the workers' metrics, so
 * that `/metrics`, answered by whichever worker took the scrape, shows the whole API.
 */

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

/** The number of API processes from SENDLINE_API_WORKERS (default 1); throws on anything else than a whole number ≥ 1. */
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
  const aggregator = new AggregatorRegistry();
  let stopping = false;
  for (let i = 0; i < count; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    log({ level: 'error', msg: 'API worker exited; starting another', pid: worker.process.pid, code, signal });
    cluster.fork();
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
 * The metrics to show: this process's registry alone, or, in a worker, every worker's summed by the
 * primary.
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
