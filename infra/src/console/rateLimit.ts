import type { Redis } from 'ioredis';

/** A fixed-window limit: at most `limit` hits per `windowMs`. */
export interface RateLimit {
  limit: number;
  windowMs: number;
}

/**
 * Counts hits per name in fixed windows (INCR, with the window's expiry set by the first hit): cheap, and enough to
 * stop one address or one client from asking for links in a loop.
 */
export class RateLimiter {
  constructor(
    private readonly redis: Redis,
    readonly namespace = 'sl',
  ) {}

  /** Counts a hit; `allowed` false past the limit, with the seconds until the window ends. */
  async hit(name: string, { limit, windowMs }: RateLimit): Promise<{ allowed: boolean; retryAfterSeconds: number }> {
    const key = `${this.namespace}:ratelimit:${name}`;
    const [[, count], [, ttl]] = (await this.redis.multi().incr(key).pexpire(key, windowMs, 'NX').pttl(key).exec()) as [
      [null, number],
      [null, number],
      [null, number],
    ];
    const left = ttl > 0 ? ttl : windowMs;
    return { allowed: count <= limit, retryAfterSeconds: Math.max(1, Math.ceil(left / 1000)) };
  }
}
