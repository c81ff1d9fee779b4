/**
 * The API process: connects to the services, builds the app, listens on
 * 127.0.0.1, and drains on SIGTERM/SIGINT (stops taking requests, finishes the
 * ones in flight, then disconnects).
 */
import { loadLocalServicesEnv, serviceAddresses } from '@sendline/infra';
import { buildApi } from './app';
import { connectApiDependencies } from './dependencies';

loadLocalServicesEnv();
const port = Number(process.env.SENDLINE_API_PORT ?? process.env.PORT ?? 3000);
const host = process.env.SENDLINE_API_HOST ?? '127.0.0.1';

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
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  app.log.info({ signal }, 'draining');
  await app.close();
  await disconnect();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
