import { AccountsView, createRedis, EventStore, SuppressionView, type ServiceAddresses } from '@sendline/infra';
import type { SenderOptions } from './sender';

/** What the sender reads and writes on the real services. */
export type SenderDependencies = Pick<SenderOptions, 'store' | 'redis' | 'accounts' | 'suppressions'>;

/** The sender's dependencies on the real services, and how to let go of them. */
export function connectSenderDependencies(
  addresses: ServiceAddresses,
  options: { clientId?: string } = {},
): { deps: SenderDependencies; disconnect(): Promise<void> } {
  const redis = createRedis(addresses.redisUrl);
  const store = EventStore.at(addresses, options.clientId ?? 'sender');
  return {
    deps: { store, redis, accounts: new AccountsView(redis), suppressions: new SuppressionView(redis) },
    disconnect: async () => {
      await store.disconnect();
      redis.disconnect();
    },
  };
}
