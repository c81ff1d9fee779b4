/**
 * The receiving server's process (MX): takes bounces and complaints for the return-path addresses, and inbound mail for
 * the organizations' inbound addresses, and records each
 * in Kafka before answering 250 (see server.ts), configured from the environment (config.ts). Stops gracefully on
 * SIGTERM/SIGINT: no new connection, idle ones closed with 421, a message being recorded gets its answer first.
 */
import { pino } from 'pino';
import {
  AccountsView,
  createRedis,
  describeCause,
  EventStore,
  kafkaClientId,
  loadLocalServicesEnv,
  returnPathKey,
  secretKeyFromEnv,
  serviceAddresses,
  topicConfigs,
} from '@sendline/infra';
import { mxConfigFromEnv } from './config';
import { MxServer } from './server';
import { CachedInboundAddresses } from './inboundAddresses';
import { CachedReturnPathHosts } from './returnPathHosts';

loadLocalServicesEnv();
const logger = pino({ level: process.env.LOG_LEVEL ?? 'info', base: { service: 'mx' } });
const config = mxConfigFromEnv();
const addresses = serviceAddresses();
const store = EventStore.at(addresses, kafkaClientId('sendline-mx'), { appendTimeoutMs: config.appendTimeoutMs });
const redis = createRedis(addresses.redisUrl);
const accounts = new AccountsView(redis);

// Provisioning creates mail.received; an MX started before it (or on a new cluster) creates it itself. Kafka away
// now is not fatal: every message is answered 451 until it is back.
await store
  .ensureTopics(topicConfigs(store.topics).filter((topic) => topic.topic === store.topics.received))
  .catch((error: unknown) =>
    logger.error({ cause: describeCause(error), topic: store.topics.received }, 'could not make sure the topic exists'),
  );

const mx = await MxServer.start({
  config,
  store,
  returnPathHosts: new CachedReturnPathHosts({
    load: () => accounts.allReturnPathHosts(),
    ttlMs: config.domainCacheMs,
  }),
  inboundAddresses: new CachedInboundAddresses({
    load: (inboundHash) => accounts.organizationOfInboundHash(inboundHash),
    ttlMs: config.domainCacheMs,
  }),
  inboundDomains: { organizationOfDomain: (domain) => accounts.organizationOfInboundDomain(domain) },
  tokenKey: returnPathKey(secretKeyFromEnv()),
  logger,
});
logger.info(
  {
    address: mx.address,
    name: config.name,
    tls: Boolean(config.tls),
    maxBytes: config.maxBytes,
    returnPathDomain: config.returnPath.domain,
    returnPathLabel: config.returnPath.label,
    inboundDomain: config.inboundDomain,
    topic: store.topics.received,
  },
  'mx listening',
);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'stopping');
  const deadline = setTimeout(() => {
    logger.error('shutdown took too long; exiting');
    process.exit(1);
  }, config.closeTimeoutMs + 15_000);
  try {
    await mx.stop();
    await store.disconnect();
    redis.disconnect();
    clearTimeout(deadline);
    logger.info(mx.stats, 'stopped');
    process.exit(0);
  } catch (error) {
    logger.error({ err: error }, 'shutdown failed');
    process.exit(1);
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
