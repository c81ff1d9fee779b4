import type { Redis } from 'ioredis';

export interface StoredAnswer {
  status: number;
  body: unknown;
}

export type IdempotencyClaim =
  { kind: 'new' } | { kind: 'replay'; answer: StoredAnswer } | { kind: 'conflict' } | { kind: 'in-progress' };

/**
 * Idempotency keys of POST /email and /email/batch: the first request with a key
 * claims it; its answer is stored for 24 hours and given again to a later request
 * with the same key and the same body; another body under that key is a conflict.
 */
export class IdempotencyStore {
  constructor(
    private readonly redis: Redis,
    readonly namespace = 'sl',
    readonly ttlSeconds = 24 * 3600,
  ) {}

  private keyOf(organizationId: string, key: string): string {
    return `${this.namespace}:idempotency:${organizationId}:${key}`;
  }

  async claim(organizationId: string, key: string, requestHash: string): Promise<IdempotencyClaim> {
    const redisKey = this.keyOf(organizationId, key);
    // A claim in progress holds only the request hash; it expires soon if its holder dies.
    const claimed = await this.redis.set(redisKey, JSON.stringify({ requestHash }), 'EX', 60, 'NX');
    if (claimed === 'OK') return { kind: 'new' };
    const existing = await this.redis.get(redisKey);
    if (existing === null) return this.claim(organizationId, key, requestHash);
    const stored = JSON.parse(existing) as { requestHash: string; answer?: StoredAnswer };
    if (stored.requestHash !== requestHash) return { kind: 'conflict' };
    return stored.answer ? { kind: 'replay', answer: stored.answer } : { kind: 'in-progress' };
  }

  async complete(organizationId: string, key: string, requestHash: string, answer: StoredAnswer): Promise<void> {
    await this.redis.set(
      this.keyOf(organizationId, key),
      JSON.stringify({ requestHash, answer }),
      'EX',
      this.ttlSeconds,
    );
  }

  /** Gives the key back when the request failed before anything was accepted, so a retry can run. */
  async abandon(organizationId: string, key: string): Promise<void> {
    await this.redis.del(this.keyOf(organizationId, key));
  }
}
