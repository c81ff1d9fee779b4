import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The projector's metrics, in their own registry (several projectors may run in one test process). */
export class ProjectorMetrics {
  readonly lag: Gauge<'projection' | 'topic' | 'partition'>;
  readonly events: Counter<'projection'>;
  readonly failures: Counter<'projection'>;
  readonly flushSeconds: Histogram;
  readonly orphans: Counter;
  readonly droppedPartitions: Counter<'table'>;

  constructor(readonly registry: Registry = new Registry()) {
    const registers = [registry];
    this.lag = new Gauge({
      name: 'sendline_projector_lag',
      help: 'Events on a partition that the projection has not committed yet (high watermark − committed offset)',
      labelNames: ['projection', 'topic', 'partition'] as const,
      registers,
    });
    this.events = new Counter({
      name: 'sendline_projector_events_total',
      help: 'Events applied to a view, by projection',
      labelNames: ['projection'] as const,
      registers,
    });
    this.failures = new Counter({
      name: 'sendline_projector_failures_total',
      help: 'Batches or events a projection failed to apply (retried, then dead-lettered), by projection',
      labelNames: ['projection'] as const,
      registers,
    });
    this.flushSeconds = new Histogram({
      name: 'sendline_projector_activity_flush_seconds',
      help: 'Time to write one batch of rows into ClickHouse',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.orphans = new Counter({
      name: 'sendline_projector_activity_orphan_events_total',
      help: 'Outcome events of messages the activity store does not hold (skipped)',
      registers,
    });
    this.droppedPartitions = new Counter({
      name: 'sendline_projector_retention_dropped_partitions_total',
      help: 'Day partitions dropped by the retention sweep, by table',
      labelNames: ['table'] as const,
      registers,
    });
  }
}

/**
 * Serves GET /metrics on `host:port` (loopback by default), and GET /healthz (200 `{"status":"ok"}` while the
 * process runs, as the API's: a process manager's or a probe's liveness check). Resolves once listening.
 */
export async function serveMetrics(registry: Registry, port: number, host = '127.0.0.1'): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method === 'GET' && request.url?.split('?')[0] === '/healthz') {
      response.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
      response.end('{"status":"ok"}');
      return;
    }
    if (request.method === 'GET' && request.url?.split('?')[0] === '/metrics') {
      registry.metrics().then(
        (body) => {
          response.writeHead(200, { 'Content-Type': registry.contentType });
          response.end(body);
        },
        (error: unknown) => {
          response.writeHead(500, { 'Content-Type': 'text/plain' });
          response.end(String(error));
        },
      );
      return;
    }
    response.writeHead(404, { 'Content-Type': 'text/plain' });
    response.end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
