/**
 * The webhooks process: calls the organizations' webhooks for their messages' deliveries and bounces and their
 * suppressions' changes (see webhooks.ts), configured from the environment (config.ts). Stops gracefully on
 * SIGTERM/SIGINT: no new batch is taken, the calls in flight finish and are committed, then the process exits.
 */
import { SystemMail, WebhooksService } from '@sendline/application';
import {
  AccountsView,
  AllowanceCounter,
  createRedis,
  EventStore,
  kafkaClientId,
  loadLocalServicesEnv,
  secretKeyFromEnv,
  serviceAddresses,
  SuppressionView,
  systemHostResolver,
  systemSenderFromEnv,
} from '@sendline/infra';
import { webhooksConfigFromEnv } from './config';
import { noticesBy } from './notices';
import { defaultLog, disablingBy, Webhooks } from './webhooks';

loadLocalServicesEnv();
const log = defaultLog();
const config = webhooksConfigFromEnv();
const addresses = serviceAddresses();
const store = EventStore.at(addresses, kafkaClientId('sendline-webhooks'));
const redis = createRedis(addresses.redisUrl);
const accounts = new AccountsView(redis);
const secretKey = secretKeyFromEnv();
// The organization's webhook use case, for disabling a webhook that failed every call for 24 hours.
const webhookAccounts = new WebhooksService({
  store,
  view: accounts,
  secretKey: () => secretKey,
  development: process.env.SENDLINE_DEV === '1',
  resolveHost: systemHostResolver,
});
// The admins of a disabled webhook are told by email, sent as any message is, from the system sender.
const systemMail = new SystemMail({
  sending: {
    store,
    accounts,
    suppressions: new SuppressionView(redis),
    allowance: new AllowanceCounter(redis),
  },
  sender: systemSenderFromEnv(),
});

const webhooks = await Webhooks.start({
  store,
  redis,
  directory: accounts,
  secretKey,
  config,
  log,
  disable: disablingBy(webhookAccounts, log),
  notifyDisabled: noticesBy(systemMail, (message, fields) => log('warn', message, fields)),
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log('info', 'stopping', { signal });
  await webhooks.stop();
  await store.disconnect();
  redis.disconnect();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
