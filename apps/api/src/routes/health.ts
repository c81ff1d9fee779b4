import type { FastifyInstance } from 'fastify';
import type { ApiDependencies } from '../app';

export function healthRoutes(deps: ApiDependencies) {
  return async function (app: FastifyInstance): Promise<void> {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    /** Ready only when Kafka and Redis answer. */
    app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
      const checks = await Promise.allSettled([
        deps.redis.ping(),
        (async () => {
          const admin = deps.store.kafka.admin();
          await admin.connect();
          try {
            await admin.describeCluster();
          } finally {
            await admin.disconnect();
          }
        })(),
      ]);
      const [redis, kafka] = checks.map((check) => (check.status === 'fulfilled' ? 'up' : 'down'));
      const ready = redis === 'up' && kafka === 'up';
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', redis, kafka });
    });
  };
}
