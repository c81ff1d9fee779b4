import { randomUUID } from 'node:crypto';
import { WebhooksService } from '@sendline/application';
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
  secretKeyFromEnv,
  SuppressionView,
  systemHostResolver,
  type HostResolver,
  type ServiceAddresses,
} from '@sendline/infra';
import type { ApiDependencies } from './context';

export interface ApiOptions {
  clientId?: string;
  mailHost?: string;
  /** Development (plain http webhooks, local addresses allowed); default: SENDLINE_DEV=1. */
  development?: boolean;
  /** How a webhook URL's host is resolved for the address check; default: the system resolver. */
  resolveHost?: HostResolver;
}

/** The API's dependencies on the real services, and how to let go of them. */
export function connectApiDependencies(
  addresses: ServiceAddresses,
  options: ApiOptions = {},
): { deps: ApiDependencies; disconnect(): Promise<void> } {
  const redis = createRedis(addresses.redisUrl);
  const clickhouse = createClickHouse(addresses.clickhouseUrl);
  const store = EventStore.at(addresses, options.clientId ?? 'api');
  const accounts = new AccountsView(redis);
  const suppressions = new SuppressionView(redis);
  const activityQueries = new ActivityQueries(clickhouse, addresses.clickhouseDatabase);
  const now = () => Date.now();
  const newId = () => randomUUID();
  const deps: ApiDependencies = {
    store,
    redis,
    accounts,
    suppressions,
    allowance: new AllowanceCounter(redis),
    idempotency: new IdempotencyStore(redis),
    activity: new ClickHouseActivityReader(clickhouse, addresses.clickhouseDatabase),
    bounces: new ClickHouseBounceReader(activityQueries, (organizationId, emails) =>
      suppressions.suppressedAmong(organizationId, emails),
    ),
    stats: new ClickHouseOutboundStatsReader(activityQueries),
    dumps: new RebuiltMessageDumps(activityQueries, store),
    webhooks: new WebhooksService({
      store,
      view: accounts,
      // Read when a secret is sealed, so an API without SENDLINE_SECRET_KEY still serves everything else.
      secretKey: () => secretKeyFromEnv(),
      development: options.development ?? process.env.SENDLINE_DEV === '1',
      resolveHost: options.resolveHost ?? systemHostResolver,
      now,
      newId,
    }),
    now,
    newId,
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
