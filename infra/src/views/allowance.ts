import type { Redis } from 'ioredis';

// KEYS[1]: the month's counter; ARGV[1]: messages to reserve; ARGV[2]: the limit ('' = unlimited);
// ARGV[3]: the counter's lifetime in seconds. Returns the new count, or -1 when the limit would be passed.
const RESERVE = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local wanted = tonumber(ARGV[1])
if ARGV[2] ~= '' and used + wanted > tonumber(ARGV[2]) then return -1 end
local now = redis.call('INCRBY', KEYS[1], wanted)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return now
`;

/**
 * The monthly sending allowance: a counter per organization and calendar month,
 * reserved atomically (a Lua script) before a message is appended, released if the
 * append fails. Suppressed recipients are not counted.
 */
export class AllowanceCounter {
  constructor(
    private readonly redis: Redis,
    readonly namespace = 'sl',
  ) {
    if (!('reserveAllowance' in redis)) {
      redis.defineCommand('reserveAllowance', { numberOfKeys: 1, lua: RESERVE });
    }
  }

  keyOf(organizationId: string, period: string): string {
    return `${this.namespace}:allowance:${organizationId}:${period}`;
  }

  /** Reserves `count` messages; false when that would pass `limit` (null = unlimited). */
  async reserve(organizationId: string, period: string, count: number, limit: number | null): Promise<boolean> {
    const run = (this.redis as unknown as Record<string, (...args: unknown[]) => Promise<number>>).reserveAllowance;
    const result = await run!.call(
      this.redis,
      this.keyOf(organizationId, period),
      count,
      limit === null ? '' : limit,
      40 * 24 * 3600,
    );
    return result >= 0;
  }

  async release(organizationId: string, period: string, count: number): Promise<void> {
    await this.redis.decrby(this.keyOf(organizationId, period), count);
  }

  async used(organizationId: string, period: string): Promise<number> {
    return Number((await this.redis.get(this.keyOf(organizationId, period))) ?? 0);
  }
}
