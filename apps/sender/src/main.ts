/**
 * The sender process: delivers accepted messages over SMTP (see sender.ts), configured from the
 * environment (config.ts). Stops gracefully on SIGTERM/SIGINT: no new batch is taken, the work in hand
 * finishes or is handed back uncommitted, then the process exits.
 */
import { kafkaClientId, loadLocalServicesEnv, secretKeyFromEnv, serviceAddresses } from '@sendline/infra';
import { senderConfigFromEnv } from './config';
import { connectSenderDependencies } from './dependencies';
import { defaultLog, Sender } from './sender';

loadLocalServicesEnv();
const log = defaultLog();
const config = senderConfigFromEnv();
const { deps, disconnect } = connectSenderDependencies(serviceAddresses(), {
  clientId: kafkaClientId('sender'),
});

const sender = await Sender.start({
  ...deps,
  secretKey: secretKeyFromEnv(),
  config,
  log,
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log('info', 'stopping', { signal });
  await sender.stop();
  await disconnect();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
