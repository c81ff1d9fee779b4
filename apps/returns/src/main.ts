/**
 * The returns reader's process: reads what our MX received (mail.received) and records the bounces, complaints
 * and automatic replies it carries (reader.ts). Stops gracefully on SIGTERM/SIGINT: the batch in hand finishes or
 * is handed back uncommitted, then the process exits. Its consumer group and session timeout come from
 * config.ts (SENDLINE_RETURNS_GROUP: a benchmark's reader on topics of its own must not join the service's group).
 */
import {
  ActivityQueries,
  createClickHouse,
  createRedis,
  inboundDomainFromEnv,
  EventStore,
  kafkaClientId,
  loadLocalServicesEnv,
  readReturnedMail,
  ReturnedMessages,
  secretKeyFromEnv,
  serviceAddresses,
  SuppressionView,
} from '@sendline/infra';
import { pino } from 'pino';
import { returnsConfigFromEnv } from './config';
import { ReturnsReader } from './reader';
import { readReportOf } from './report';

loadLocalServicesEnv();
const logger = pino({ level: process.env.LOG_LEVEL ?? 'info', base: { service: 'returns' } });
const config = returnsConfigFromEnv();
const addresses = serviceAddresses();
const store = EventStore.at(addresses, kafkaClientId('returns'));
const redis = createRedis(addresses.redisUrl);
const clickhouse = createClickHouse(addresses.clickhouseUrl);

const { consumer } = await ReturnsReader.start({
  store,
  messages: new ReturnedMessages(new ActivityQueries(clickhouse, addresses.clickhouseDatabase, { timeoutMs: 10_000 })),
  suppressions: new SuppressionView(redis),
  secretKey: secretKeyFromEnv(),
  readReport: async (raw) => readReportOf(await readReturnedMail(raw)),
  log: (level, message, fields) => logger[level](fields ?? {}, message),
  groupId: config.groupId,
  inboundDomain: inboundDomainFromEnv(),
  sessionTimeoutMs: config.sessionTimeoutMs,
});
logger.info({ topic: store.topics.received, group: config.groupId }, 'returns reader started');

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
