/**
 * The projector process: keeps the views from their topics (accounts, audit and
 * suppressions in Redis, activity in ClickHouse), copies every account event to
 * the never-compacted history the audit is built from (archiver.ts), sweeps activity past 30 days
 * hourly, and serves its metrics (lag per partition) on 127.0.0.1. On SIGTERM or
 * SIGINT it stops consuming, writes what it holds, and exits.
 */
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { pino } from 'pino';
import {
  createClickHouse,
  createRedis,
  EventStore,
  kafkaClientId,
  loadLocalServicesEnv,
  migrate,
  serviceAddresses,
} from '@sendline/infra';
import { projectorConfigFromEnv } from './config';
import { ProjectorMetrics, serveMetrics } from './metrics';
import { startProjector } from './projector';

loadLocalServicesEnv();
const logger = pino({ level: process.env.LOG_LEVEL ?? 'info', base: { service: 'projector' } });
const addresses = serviceAddresses();
const { metricsPort, sessionTimeoutMs, groupPrefix } = projectorConfigFromEnv();

const clientId = kafkaClientId('projector');
const store = EventStore.at(addresses, clientId);
const redis = createRedis(addresses.redisUrl);
const clickhouse = createClickHouse(addresses.clickhouseUrl);
const registry = new Registry();
collectDefaultMetrics({ register: registry });

// The activity store's tables must exist before the first write (safe to run again).
await migrate(clickhouse, addresses.clickhouseDatabase);
const projector = await startProjector({
  store,
  redis,
  clickhouse,
  database: addresses.clickhouseDatabase,
  logger,
  metrics: new ProjectorMetrics(registry),
  sessionTimeoutMs,
  groupPrefix,
});
const server = await serveMetrics(registry, metricsPort);
// With SENDLINE_PROJECTOR_METRICS_PORT=0 (several copies on one machine) the port is the one the system picked.
const { port } = server.address() as AddressInfo;
logger.info(
  {
    metrics: `http://127.0.0.1:${port}/metrics`,
    clientId,
    groups: projector.groups,
    archiver: projector.archiverGroup,
  },
  'projector running',
);
void projector.refreshLag().catch(() => undefined);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'stopping');
  const deadline = setTimeout(() => {
    logger.error('shutdown took over 30 s; exiting');
    process.exit(1);
  }, 30_000);
  try {
    server.close();
    await projector.stop();
    await store.disconnect();
    await clickhouse.close();
    redis.disconnect();
    clearTimeout(deadline);
    process.exit(0);
  } catch (error) {
    logger.error({ err: error }, 'shutdown failed');
    process.exit(1);
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
