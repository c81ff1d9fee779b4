/**
 * The inbound reader's process: reads what our MX received for the organizations' inbound addresses
 * (mail.received), parses each mail into Postmark's inbound JSON, records it (email.inbound) and schedules its
 * posting to the organization's InboundHookUrl (the webhooks process makes the calls). Stops gracefully on
 * SIGTERM/SIGINT: the batch in hand finishes or is handed back uncommitted.
 */
import {
  AccountsView,
  createRedis,
  EventStore,
  kafkaClientId,
  loadLocalServicesEnv,
  serviceAddresses,
} from '@sendline/infra';
import { pino } from 'pino';
import { inboundConfigFromEnv } from './config';
import { InboundReader } from './reader';

loadLocalServicesEnv();
const logger = pino({ level: process.env.LOG_LEVEL ?? 'info', base: { service: 'inbound' } });
const config = inboundConfigFromEnv();
const addresses = serviceAddresses();
const store = EventStore.at(addresses, kafkaClientId('inbound'));
const redis = createRedis(addresses.redisUrl);

const { consumer } = await InboundReader.start({
  store,
  directory: new AccountsView(redis),
  inboundDomain: config.inboundDomain,
  mta: config.mta,
  dns: config.dns,
  groupId: config.groupId,
  sessionTimeoutMs: config.sessionTimeoutMs,
  log: (level, message, fields) => logger[level](fields ?? {}, message),
  onRecorded: (events) => {
    for (const event of events) {
      if (event.type !== 'InboundMessageReceived') continue;
      logger.info(
        {
          messageId: event.data.messageId,
          organizationId: event.metadata.organizationId,
          receivedId: event.data.receivedId,
          status: event.data.status,
          bytes: event.data.sizeBytes,
        },
        'inbound message recorded',
      );
    }
  },
});
logger.info(
  { topic: store.topics.received, group: config.groupId, inboundDomain: config.inboundDomain },
  'inbound reader started',
);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'stopping');
  await consumer.stop();
  await store.disconnect();
  redis.disconnect();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
