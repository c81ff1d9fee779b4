import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { allowanceKeys, messageMarker } from '../../src/views/allowance/view';

describe('the allowance marker of a MessageID', () => {
  it('is the same for the same id, every time (a keyed retry finds the first message)', () => {
    const id = randomUUID();
    expect(messageMarker(id)).toEqual(messageMarker(id));
  });

  it('is a canonical 64-bit integer (Redis keeps sets of them packed) in one of 4,096 sets', () => {
    for (let i = 0; i < 2000; i++) {
      const { bucket, member } = messageMarker(randomUUID());
      expect(bucket).toMatch(/^[0-9a-f]{3}$/);
      expect(BigInt(member).toString()).toBe(member);
      expect(BigInt(member) >= -(2n ** 63n) && BigInt(member) < 2n ** 63n).toBe(true);
    }
  });

  it('tells 100,000 ids apart and spreads them over the sets', () => {
    const markers = new Set<string>();
    const buckets = new Map<string, number>();
    for (let i = 0; i < 100_000; i++) {
      const { bucket, member } = messageMarker(randomUUID());
      markers.add(`${bucket}/${member}`);
      buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1);
    }
    expect(markers.size).toBe(100_000);
    expect(buckets.size).toBe(4096);
    // About 24 a set; none near the 512 where Redis stops packing a set of integers.
    expect(Math.max(...buckets.values())).toBeLessThan(100);
  });

  it('keeps the count from the log apart from the API holds (a replay swaps the former only)', () => {
    const keys = allowanceKeys('sl', 'org-1', '2026-11');
    expect(keys.logged).toBe('sl:{allowance}:org-1:2026-11:logged');
    expect(keys.seen('0af')).toBe('sl:{allowance}:org-1:2026-11:ids:0af');
    expect(
      [keys.holds, keys.holdCounts, keys.held].every((key) => key.startsWith('sl:holds:{allowance}:org-1:2026-11')),
    ).toBe(true);
  });
});
