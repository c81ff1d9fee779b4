import type { Redis } from 'ioredis';

/** A key's use is written at most once a minute per process. */
export const KEY_USAGE_RESOLUTION_MS = 60_000;

/**
 * When each API key was last used (the console's "last used"). Not history: a hint, written at most once a minute
 * per key and process, without waiting (the request never waits for it, and a lost write only makes the hint a
 * minute older).
 *
 *   <ns>:keyused:<organizationId>   hash: keyId → epoch ms (outside the accounts view's keys: a replay leaves it)
 */
export class KeyUsage {
  private readonly lastWritten = new Map<string, number>();

  constructor(
    private readonly redis: Redis,
    readonly namespace = 'sl',
    private readonly now: () => number = Date.now,
  ) {}

  private keyOf(organizationId: string): string {
    return `${this.namespace}:keyused:${organizationId}`;
  }

  /** Notes a use of the key; returns at once. */
  touch(organizationId: string, keyId: string): void {
    const now = this.now();
    const last = this.lastWritten.get(keyId);
    if (last !== undefined && now - last < KEY_USAGE_RESOLUTION_MS) return;
    if (this.lastWritten.size > 100_000) this.lastWritten.clear();
    this.lastWritten.set(keyId, now);
    this.redis.hset(this.keyOf(organizationId), keyId, String(now)).catch(() => {
      // A hint only: forget the write so the next use tries again.
      this.lastWritten.delete(keyId);
    });
  }

  /** keyId → when it was last used (keys never used are absent). */
  async lastUsed(organizationId: string): Promise<Map<string, number>> {
    const all = await this.redis.hgetall(this.keyOf(organizationId));
    return new Map(Object.entries(all).map(([keyId, at]) => [keyId, Number(at)]));
  }
}
