import { randomUUID } from 'node:crypto';
import {
  AccountsView,
  ActivityQueries,
  AllowanceCounter,
  ClickHouseActivityReader,
  ClickHouseBounceReader,
  ClickHouseOutboundStatsReader,
  createClickHouse,
  createRedis,
  EventStore,
  IdempotencyStore,
  mailHostFromEnv,
  RebuiltMessageDumps,
  SuppressionView,
  type ServiceAddresses,
} from '@sendline/infra';
import type { ApiDependencies } from './context';

/** The API's dependencies on the real services, and how to let go of them. */
export function connectApiDependencies(
  addresses: ServiceAddresses,
  options: { clientId?: string; mailHost?: string } = {},
): { deps: ApiDependencies; disconnect(): Promise<void> } {
  const redis = createRedis(addresses.redisUrl);
  const clickhouse = createClickHouse(addresses.clickhouseUrl);
  const store = EventStore.at(addresses, options.clientId ?? 'api');
  const suppressions = new SuppressionView(redis);
  const activityQueries = new ActivityQueries(clickhouse, addresses.clickhouseDatabase);
  const deps: ApiDependencies = {
    store,
    redis,
    accounts: new AccountsView(redis),
    suppressions,
    allowance: new AllowanceCounter(redis),
    idempotency: new IdempotencyStore(redis),
    activity: new ClickHouseActivityReader(clickhouse, addresses.clickhouseDatabase),
    bounces: new ClickHouseBounceReader(activityQueries, (organizationId, emails) =>
      suppressions.suppressedAmong(organizationId, emails),
    ),
    stats: new ClickHouseOutboundStatsReader(activityQueries),
    dumps: new RebuiltMessageDumps(activityQueries, store),
    now: () => Date.now(),
    newId: () => randomUUID(),
    mailHost: options.mailHost ?? mailHostFromEnv(),
  };
  return {
    deps,
    disconnect: async () => {
      await store.disconnect();
      await clickhouse.close();
      redis.disconnect();
    },
  };
}
