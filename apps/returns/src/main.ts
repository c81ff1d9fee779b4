/**
 * The returns reader's process: reads what our MX received (mail.received) and records the bounces, complaints
 * and automatic replies it carries (reader.ts). Stops gracefully on SIGTERM/SIGINT: the batch in hand finishes or
 * is handed back uncommitted, then the process exits. Its consumer group is SENDLINE_RETURNS_GROUP (default
 * `returns-reader`): a benchmark's reader on topics of its own must not join the running service's group.
 */
import {
  ActivityQueries,
  createClickHouse,
  createRedis,
  EventStore,
  loadLocalServicesEnv,
  readReturnedMail,
  ReturnedMessages,
  secretKeyFromEnv,
  serviceAddresses,
  SuppressionView,
} from '@sendline/infra';
import { pino } from 'pino';
import { ReturnsReader } from './reader';
import { readReportOf } from './report';

loadLocalServicesEnv();
const logger = pino({ level: process.env.LOG_LEVEL ?? 'info', base: { service: 'returns' } });
const addresses = serviceAddresses();
const store = EventStore.at(addresses, 'returns');
const redis = createRedis(addresses.redisUrl);
const clickhouse = createClickHouse(addresses.clickhouseUrl);

const { consumer } = await ReturnsReader.start({
  store,
  messages: new ReturnedMessages(new ActivityQueries(clickhouse, addresses.clickhouseDatabase, { timeoutMs: 10_000 })),
  suppressions: new SuppressionView(redis),
  secretKey: secretKeyFromEnv(),
  readReport: async (raw) => readReportOf(await readReturnedMail(raw)),
  groupId: process.env.SENDLINE_RETURNS_GROUP || 'returns-reader',
  log: (level, message, fields) => logger[level](fields ?? {}, message),
});
logger.info({ topic: store.topics.received }, 'returns reader started');

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'stopping');
  await consumer.stop();
  await store.disconnect();
  redis.disconnect();
  await clickhouse.close();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
