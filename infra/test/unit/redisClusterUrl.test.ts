import { describe, expect, it } from 'vitest';
import { clusterNodesOf, unavailableService } from '../../src';

describe('a Redis Cluster URL', () => {
  it('names some of the nodes, comma-separated; a redis:// URL is one Redis', () => {
    expect(clusterNodesOf('redis-cluster://127.0.0.1:7000,127.0.0.1:7001,redis-c:6380')).toEqual([
      { host: '127.0.0.1', port: 7000 },
      { host: '127.0.0.1', port: 7001 },
      { host: 'redis-c', port: 6380 },
    ]);
    expect(clusterNodesOf('redis-cluster://redis-a')).toEqual([{ host: 'redis-a', port: 6379 }]);
    expect(clusterNodesOf('redis://127.0.0.1:6379')).toBeUndefined();
  });

  it('refuses a node that is not host:port', () => {
    expect(() => clusterNodesOf('redis-cluster://')).toThrow(/host:port/);
    expect(() => clusterNodesOf('redis-cluster://a:b')).toThrow(/host:port/);
  });
});

describe('a Redis Cluster failing over', () => {
  it('is Redis being unavailable: the API answers 503, a consumer waits', () => {
    for (const message of [
      'CLUSTERDOWN The cluster is down',
      'MOVED 12792 127.0.0.1:7004',
      'TRYAGAIN Multiple keys request during rehashing of slot',
      'Failed to refresh slots cache.',
      "Cluster isn't ready and enableOfflineQueue options is false",
    ]) {
      expect(unavailableService(new Error(message)), message).toBe('redis');
    }
  });
});
