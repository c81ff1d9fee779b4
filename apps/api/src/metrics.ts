import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { clusterAwareMetrics } from './workers';

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

const requestDuration = new Histogram({
  name: 'sendline_api_request_duration_seconds',
  help: 'HTTP request duration by route and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [metricsRegistry],
});

export const messagesAccepted = new Counter({
  name: 'sendline_messages_accepted_total',
  help: 'Messages accepted (appended to Kafka) by key mode',
  labelNames: ['mode'] as const,
  registers: [metricsRegistry],
});

export const messagesRefused = new Counter({
  name: 'sendline_messages_refused_total',
  help: 'Messages refused, by ErrorCode',
  labelNames: ['error_code'] as const,
  registers: [metricsRegistry],
});

export function registerMetrics(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    requestDuration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unknown', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
  const metrics = clusterAwareMetrics(metricsRegistry);
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.header('Content-Type', metricsRegistry.contentType);
    return metrics();
  });
}
