import { randomUUID } from 'node:crypto';
import {
  AccountsView,
  AllowanceCounter,
  ClickHouseActivityReader,
  createClickHouse,
  createRedis,
  EventStore,
  IdempotencyStore,
  mailHostFromEnv,
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
  const deps: ApiDependencies = {
    store,
    redis,
    accounts: new AccountsView(redis),
    suppressions: new SuppressionView(redis),
    allowance: new AllowanceCounter(redis),
    idempotency: new IdempotencyStore(redis),
    activity: new ClickHouseActivityReader(clickhouse, addresses.clickhouseDatabase),
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
