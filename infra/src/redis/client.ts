import { Redis } from 'ioredis';

export type { Redis };

export function createRedis(url: string, options: { lazyConnect?: boolean } = {}): Redis {
  return new Redis(url, {
    lazyConnect: options.lazyConnect ?? false,
    maxRetriesPerRequest: 3,
    enableOfflineQueue: true,
    connectTimeout: 3000,
    // Commands issued in the same tick (concurrent requests' lookups) leave in one write.
    enableAutoPipelining: true,
  });
}
