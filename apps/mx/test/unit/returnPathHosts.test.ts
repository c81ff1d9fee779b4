import { describe, expect, it } from 'vitest';
import { CachedReturnPathHosts } from '../../src/returnPathHosts';

function source(initial: string[]) {
  const state = { names: new Set(initial), reads: 0, fail: false };
  return {
    state,
    load: async () => {
      state.reads++;
      if (state.fail) throw new Error('Redis is away');
      return new Set(state.names);
    },
  };
}

describe('the sending domains, cached', () => {
  it('reads the view once for many lookups within the time to live', async () => {
    let now = 0;
    const s = source(['shop.example']);
    const cache = new CachedReturnPathHosts({ load: s.load, ttlMs: 30_000, now: () => now });
    expect(await cache.isReturnPathHost('shop.example')).toBe(true);
    now += 10_000;
    expect(await cache.isReturnPathHost('shop.example')).toBe(true);
    expect(s.state.reads).toBe(1);
    now += 25_000;
    expect(await cache.isReturnPathHost('shop.example')).toBe(true);
    expect(s.state.reads).toBe(2);
  });

  it('finds a domain added a moment ago at the next lookup past a second, and no sooner', async () => {
    let now = 0;
    const s = source([]);
    const cache = new CachedReturnPathHosts({ load: s.load, ttlMs: 30_000, now: () => now });
    expect(await cache.isReturnPathHost('new.example')).toBe(false);
    s.state.names.add('new.example');
    now += 500;
    expect(await cache.isReturnPathHost('new.example')).toBe(false);
    now += 600;
    expect(await cache.isReturnPathHost('new.example')).toBe(true);
    expect(s.state.reads).toBe(2);
  });

  it('reads once for lookups made at the same time', async () => {
    const s = source(['shop.example']);
    const cache = new CachedReturnPathHosts({ load: s.load, ttlMs: 30_000 });
    await Promise.all(Array.from({ length: 20 }, () => cache.isReturnPathHost('shop.example')));
    expect(s.state.reads).toBe(1);
  });

  it('still takes a domain it knew when a read fails, and lets the failure through for one it did not', async () => {
    let now = 0;
    const s = source(['shop.example']);
    const cache = new CachedReturnPathHosts({ load: s.load, ttlMs: 1000, now: () => now });
    await cache.isReturnPathHost('shop.example');
    s.state.fail = true;
    now += 5000;
    expect(await cache.isReturnPathHost('shop.example')).toBe(true);
    await expect(cache.isReturnPathHost('other.example')).rejects.toThrow('Redis is away');
  });
});
