/**
 * The API process: connects to the services, builds the app, listens on
 * 127.0.0.1, and drains on SIGTERM/SIGINT (stops taking requests, finishes the
 * ones in flight, then disconnects).
 */
import { randomUUID } from 'node:crypto';
import {
  AccountsView,
  AllowanceCounter,
  ClickHouseActivityReader,
  createClickHouse,
  createRedis,
  EventStore,
  IdempotencyStore,
  loadLocalServicesEnv,
  serviceAddresses,
  SuppressionView,
} from '@sendline/infra';
import { buildApi } from './app';

loadLocalServicesEnv();
const addresses = serviceAddresses();
const port = Number(process.env.SENDLINE_API_PORT ?? process.env.PORT ?? 3000);
const host = process.env.SENDLINE_API_HOST ?? '127.0.0.1';

const redis = createRedis(addresses.redisUrl);
const clickhouse = createClickHouse(addresses.clickhouseUrl);
const store = new EventStore({
  brokers: addresses.kafkaBrokers,
  registryUrl: addresses.schemaRegistryUrl,
  clientId: 'api',
});

const app = await buildApi(
  {
    store,
    redis,
    accounts: new AccountsView(redis),
    suppressions: new SuppressionView(redis),
    allowance: new AllowanceCounter(redis),
    idempotency: new IdempotencyStore(redis),
    activity: new ClickHouseActivityReader(clickhouse, addresses.clickhouseDatabase),
    now: () => Date.now(),
    newId: () => randomUUID(),
    mailHost: process.env.SENDLINE_MAIL_HOST ?? 'mail.sendline.dev',
  },
  {
    logger: {
      level: process.env.LOG_LEVEL ?? 'info',
      // Never a key or a message body in the logs: requests are logged by method and path only.
      redact: ['req.headers.authorization', 'req.headers["x-postmark-server-token"]'],
    } as never,
  },
);

await app.listen({ port, host });

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  app.log.info({ signal }, 'draining');
  await app.close();
  await store.disconnect();
  await clickhouse.close();
  redis.disconnect();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
