/**
 * The API: a primary process that runs SENDLINE_API_WORKERS (default one per core, at least two) worker
 * processes on one port (workers.ts). Each worker connects to the services, builds the app, listens on
 * 127.0.0.1, and drains on SIGTERM/SIGINT (stops taking connections, finishes the requests in flight, then
 * disconnects and exits 0).
 */
import cluster from 'node:cluster';
import { loadLocalServicesEnv } from '@sendline/infra';
import { apiWorkersFromEnv, runPrimary } from './workers';

loadLocalServicesEnv();

if (cluster.isPrimary) {
  let workers: number;
  try {
    workers = apiWorkersFromEnv();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
  runPrimary(workers, (fields) =>
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), logger: 'api', ...fields })}\n`),
  );
} else {
  const { kafkaClientId, serviceAddresses } = await import('@sendline/infra');
  const { buildApi } = await import('./app');
  const { connectApiDependencies } = await import('./dependencies');
  const port = Number(process.env.SENDLINE_API_PORT ?? process.env.PORT ?? 3000);
  const host = process.env.SENDLINE_API_HOST ?? '127.0.0.1';

  // Each worker is its own Kafka client: `api-<instance>-w<n>` (SENDLINE_INSTANCE_ID, docs/scaling.md).
  const { deps, disconnect } = connectApiDependencies(serviceAddresses(), {
    clientId: kafkaClientId('api', process.env, cluster.worker?.id),
  });
  const app = await buildApi(deps, {
    logger: {
      level: process.env.LOG_LEVEL ?? 'info',
      // Never a key or a message body in the logs: requests are logged by method and path only.
      redact: ['req.headers.authorization', 'req.headers["x-postmark-server-token"]'],
    } as never,
  });

  await app.listen({ port, host });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'draining');
    try {
      await app.close();
      await disconnect();
    } catch (error) {
      app.log.error({ err: error }, 'the worker did not drain cleanly');
      process.exit(1);
    }
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
