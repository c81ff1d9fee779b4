/**
 * The API process: connects to the services, builds the app, listens on
 * 127.0.0.1, and drains on SIGTERM/SIGINT (stops taking requests, finishes the
 * ones in flight, then disconnects).
 *
 * With SENDLINE_API_WORKERS=N (N > 1) this process is the primary of N such processes sharing the port
 * (see workers.ts).
 */
import cluster from 'node:cluster';
import { loadLocalServicesEnv, serviceAddresses } from '@sendline/infra';
import { buildApi } from './app';
import { connectApiDependencies } from './dependencies';
import { apiWorkersFromEnv, runPrimary } from './workers';

loadLocalServicesEnv();
const port = Number(process.env.SENDLINE_API_PORT ?? process.env.PORT ?? 3000);
const host = process.env.SENDLINE_API_HOST ?? '127.0.0.1';
let workers: number;
try {
  workers = apiWorkersFromEnv();
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(2);
}

if (workers > 1 && cluster.isPrimary) {
  runPrimary(workers, (fields) =>
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), logger: 'api', ...fields })}\n`),
  );
} else {
  const { deps, disconnect } = connectApiDependencies(serviceAddresses());
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
    await app.close();
    await disconnect();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
