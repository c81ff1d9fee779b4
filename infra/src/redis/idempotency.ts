import type { Redis } from 'ioredis';

export interface StoredAnswer {
  status: number;
  body: unknown;
}

/**
 * What an Idempotency-Key holds when a request arrives with it:
 * - `new`: the first request with this key (its time is now);
 * - `retry`: an earlier request with this key and this body has no stored answer — it died (a worker's
 *   death, a 503, a timeout) or is still running. It is run again with the first request's time; since
 *   its messages' ids are derived from the key and the body, what it appends is the same message;
 * - `replay`: the stored answer of the earlier request, given again;
 * - `conflict`: the key was used with another body.
 */
export type IdempotencyClaim =
  | { kind: 'new'; submittedAt: number }
  | { kind: 'retry'; submittedAt: number }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'conflict' };

/**
 * Idempotency keys of POST /email and /email/batch, in Redis for 24 hours: the request's hash and the
 * first attempt's time, then its answer. This is the fast path that replays an exact answer and spots a
 * key reused with another body; it does not decide whether a message is sent once — the derived
 * MessageID does (a lost or expired entry makes a retry append the same message again, which every
 * consumer drops).
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

  async claim(organizationId: string, key: string, requestHash: string, now: number): Promise<IdempotencyClaim> {
    const redisKey = this.keyOf(organizationId, key);
    const claimed = await this.redis.set(
      redisKey,
      JSON.stringify({ requestHash, submittedAt: now }),
      'EX',
      this.ttlSeconds,
      'NX',
    );
    if (claimed === 'OK') return { kind: 'new', submittedAt: now };
    const existing = await this.redis.get(redisKey);
    if (existing === null) return this.claim(organizationId, key, requestHash, now);
    const stored = JSON.parse(existing) as { requestHash: string; submittedAt?: number; answer?: StoredAnswer };
    if (stored.requestHash !== requestHash) return { kind: 'conflict' };
    if (stored.answer) return { kind: 'replay', answer: stored.answer };
    return { kind: 'retry', submittedAt: stored.submittedAt ?? now };
  }

  /** Stores the answer for later requests with the same key and body. */
  async complete(
    organizationId: string,
    key: string,
    requestHash: string,
    submittedAt: number,
    answer: StoredAnswer,
  ): Promise<void> {
    await this.redis.set(
      this.keyOf(organizationId, key),
      JSON.stringify({ requestHash, submittedAt, answer }),
      'EX',
      this.ttlSeconds,
    );
  }
}
