/**
 * The sender process: delivers accepted messages over SMTP (see sender.ts), configured from the
 * environment (config.ts). Stops gracefully on SIGTERM/SIGINT: no new batch is taken, the work in hand
 * finishes or is handed back uncommitted, then the process exits.
 */
import {
  AccountsView,
  createRedis,
  EventStore,
  loadLocalServicesEnv,
  secretKeyFromEnv,
  serviceAddresses,
  SuppressionView,
} from '@sendline/infra';
import { senderConfigFromEnv } from './config';
import { defaultLog, Sender } from './sender';

loadLocalServicesEnv();
const log = defaultLog();
const addresses = serviceAddresses();
const config = senderConfigFromEnv();
const redis = createRedis(addresses.redisUrl);
const store = new EventStore({
  brokers: addresses.kafkaBrokers,
  registryUrl: addresses.schemaRegistryUrl,
  clientId: 'sender',
});

const sender = await Sender.start({
  store,
  redis,
  accounts: new AccountsView(redis),
  suppressions: new SuppressionView(redis),
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
  await store.disconnect();
  redis.disconnect();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
