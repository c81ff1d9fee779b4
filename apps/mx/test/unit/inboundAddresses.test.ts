import { describe, expect, it } from 'vitest';
import { CachedInboundAddresses } from '../../src/inboundAddresses';

function view(initial: Record<string, string>) {
  const state = { owners: new Map(Object.entries(initial)), reads: 0, fail: false };
  return {
    state,
    load: async (hash: string) => {
      state.reads++;
      if (state.fail) throw new Error('Redis is away');
      return state.owners.get(hash) ?? null;
    },
  };
}

describe('the inbound addresses, cached', () => {
  it('asks the view once for many messages to one address within the time to live', async () => {
    let now = 0;
    const v = view({ abc: 'org-1' });
    const cache = new CachedInboundAddresses({ load: v.load, ttlMs: 30_000, now: () => now });
    expect(await cache.organizationOf('abc')).toBe('org-1');
    now += 10_000;
    expect(await cache.organizationOf('ABC')).toBe('org-1');
    expect(v.state.reads).toBe(1);
    now += 25_000;
    expect(await cache.organizationOf('abc')).toBe('org-1');
    expect(v.state.reads).toBe(2);
  });

  it('keeps no answer "none": an address set up a moment ago is taken at its first message', async () => {
    const v = view({});
    const cache = new CachedInboundAddresses({ load: v.load, ttlMs: 30_000 });
    expect(await cache.organizationOf('new')).toBeNull();
    v.state.owners.set('new', 'org-2');
    expect(await cache.organizationOf('new')).toBe('org-2');
  });

  it('fails when the view cannot be read and the address is not held (the MX answers 451)', async () => {
    const v = view({ abc: 'org-1' });
    v.state.fail = true;
    const cache = new CachedInboundAddresses({ load: v.load, ttlMs: 30_000 });
    await expect(cache.organizationOf('abc')).rejects.toThrow('Redis is away');
  });

  it('holds at most maxEntries addresses, forgetting the oldest first', async () => {
    const v = view({ a: 'org-a', b: 'org-b', c: 'org-c' });
    const cache = new CachedInboundAddresses({ load: v.load, ttlMs: 30_000, maxEntries: 2 });
    for (const hash of ['a', 'b', 'c']) await cache.organizationOf(hash);
    expect(v.state.reads).toBe(3);
    await cache.organizationOf('c');
    await cache.organizationOf('b');
    expect(v.state.reads).toBe(3);
    await cache.organizationOf('a');
    expect(v.state.reads).toBe(4);
  });
});
