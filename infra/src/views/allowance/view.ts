import { createHash } from 'node:crypto';
import { allowancePeriodBounds, type MessageAccepted } from '@sendline/domain';
import type { Redis } from 'ioredis';
import type { ViewBatch } from '../positions';

/**
 * The monthly sending allowance equals the log.
 *
 * - **Logged** (the allowance view, built by the projector from `email.messages`): per organization and month
 *   (the message's `submittedAt`), `activeRecipients.length` of each MessageAccepted, counted once per MessageID.
 *   A MessageID is remembered as a 64-bit marker (from SHA-256 of the id) in one of 4,096 integer sets per
 *   organization and month (Redis keeps sets of up to 512 integers as packed arrays): 1M messages in a month
 *   measured 9.6 MB, where a set of the ids themselves would take several times that; two ids share a marker
 *   with odds below 1e-10 at 1M a month.
 *   The keys expire 35 days after the month (the topic keeps 33 days: a rebuild can never bring back half a month).
 * - **Held** (written by the API): before appending, the API holds the message's recipients under its MessageID,
 *   atomically checking `logged + held + new <= limit` (a Lua script). A hold ends when the projector counts the
 *   message (the same script that counts it releases it) or when it expires (60 s by default, longer than the
 *   append timeout plus the projector's lag); expired holds are cleaned lazily by the next reservation, and the
 *   running total `held` stays O(1). An append that failed is never refunded: its event may still land (the broker
 *   acknowledging after the timeout), in which case the hold turns into a count; otherwise it expires.
 * - **Used** = logged + held. Unlimited organizations place no hold (nothing to check).
 */

/** How long a hold lasts when its message never lands. */
export const DEFAULT_HOLD_MS = 60_000;
/** How long after its month an organization's count and markers are kept. */
const KEEP_AFTER_PERIOD_MS = 35 * 24 * 3600 * 1000;
const BUCKETS = 4096;

/** The marker of a MessageID: which of the month's sets it goes in, and its 64-bit member there. */
export function messageMarker(messageId: string): { bucket: string; member: string } {
  const digest = createHash('sha256').update(messageId).digest();
  const bucket = digest.readUInt16BE(0) % BUCKETS;
  return { bucket: bucket.toString(16).padStart(3, '0'), member: digest.readBigInt64BE(2).toString() };
}

/** The keys of one organization and month. */
export function allowanceKeys(namespace: string, organizationId: string, period: string) {
  const base = `${namespace}:{allowance}:${organizationId}:${period}`;
  const holds = `${namespace}:holds:{allowance}:${organizationId}:${period}`;
  return {
    logged: `${base}:logged`,
    seen: (bucket: string) => `${base}:ids:${bucket}`,
    holds,
    holdCounts: `${holds}:n`,
    held: `${holds}:total`,
  };
}

// Drops up to 100 expired holds (KEYS: holds, hold counts, held total; ARGV[1]: now in ms). Shared prelude.
const CLEANUP = `
local now = tonumber(ARGV[1])
local held = tonumber(redis.call('GET', KEYS[3]) or '0')
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 100)
for _, id in ipairs(expired) do
  held = held - tonumber(redis.call('HGET', KEYS[2], id) or '0')
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[1], id)
end
if held < 0 then held = 0 end
if #expired > 0 then redis.call('SET', KEYS[3], held, 'KEEPTTL') end
`;

// KEYS: holds, hold counts, held total, logged, then one marker set per message.
// ARGV: now (ms), limit ('' = none), hold ms, key lifetime ms, then per message: id, recipients, member.
// Returns logged + held after the reservation, or -1 - (logged + held) when it would pass the limit.
const RESERVE = `${CLEANUP}
local logged = tonumber(redis.call('GET', KEYS[4]) or '0')
local holdMs, keepMs = tonumber(ARGV[3]), tonumber(ARGV[4])
local wanted, fresh, again = 0, {}, {}
local m = 0
for i = 5, #ARGV, 3 do
  m = m + 1
  local id, n, member = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2]
  -- Already counted from the log: nothing to hold. Already held (a retry of the same message): hold it longer.
  if redis.call('SISMEMBER', KEYS[4 + m], member) == 0 then
    if redis.call('ZSCORE', KEYS[1], id) then
      again[#again + 1] = id
    else
      wanted = wanted + n
      fresh[#fresh + 1] = { id, n }
    end
  end
end
if wanted > 0 and ARGV[2] ~= '' and logged + held + wanted > tonumber(ARGV[2]) then return -1 - (logged + held) end
for _, id in ipairs(again) do redis.call('ZADD', KEYS[1], now + holdMs, id) end
for _, hold in ipairs(fresh) do
  redis.call('ZADD', KEYS[1], now + holdMs, hold[1])
  redis.call('HSET', KEYS[2], hold[1], hold[2])
end
held = held + wanted
redis.call('SET', KEYS[3], held)
for k = 1, 3 do redis.call('PEXPIRE', KEYS[k], keepMs) end
return logged + held
`;

// KEYS: holds, hold counts, held total, logged; ARGV[1]: now (ms). Returns { logged, held }.
const USED = `${CLEANUP}
return { tonumber(redis.call('GET', KEYS[4]) or '0'), held }
`;

/** One message's claim on the allowance: its MessageID and its active recipients. */
export interface AllowanceHold {
  messageId: string;
  recipients: number;
}

/** Defines the allowance's Lua commands on a client (createRedis does it when the client is made: see positions.ts). */
export function defineAllowanceCommands(redis: Redis): void {
  if ('sendlineReserveAllowance' in redis) return;
  redis.defineCommand('sendlineReserveAllowance', { lua: RESERVE });
  redis.defineCommand('sendlineAllowanceUsed', { lua: USED });
}

/** What the API reads and reserves (see the module's comment). */
export class AllowanceCounter {
  constructor(
    private readonly redis: Redis,
    readonly namespace = 'sl',
    private readonly options: { holdMs?: number; now?: () => number } = {},
  ) {
    defineAllowanceCommands(redis);
  }

  private command(name: string): (...args: unknown[]) => Promise<unknown> {
    const run = (this.redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[name]!;
    return (...args) => run.apply(this.redis, args);
  }

  /**
   * Holds the messages' recipients, all or none: false when `logged + held` plus what is new would pass `limit`.
   * A message already counted or already held reserves nothing again (a keyed retry). Call only with a limit:
   * an unlimited organization needs no hold.
   */
  async reserve(organizationId: string, period: string, holds: readonly AllowanceHold[], limit: number | null) {
    if (holds.length === 0) return true;
    const keys = allowanceKeys(this.namespace, organizationId, period);
    const markers = holds.map((hold) => messageMarker(hold.messageId));
    const { endsAt } = allowancePeriodBounds(periodStart(period));
    const now = (this.options.now ?? Date.now)();
    const result = (await this.command('sendlineReserveAllowance')(
      4 + holds.length,
      keys.holds,
      keys.holdCounts,
      keys.held,
      keys.logged,
      ...markers.map((marker) => keys.seen(marker.bucket)),
      now,
      limit === null ? '' : limit,
      this.options.holdMs ?? DEFAULT_HOLD_MS,
      Math.max(endsAt + KEEP_AFTER_PERIOD_MS - now, 60_000),
      ...holds.flatMap((hold, i) => [hold.messageId, hold.recipients, markers[i]!.member]),
    )) as number;
    return result >= 0;
  }

  /** The month's usage: counted from the log, held for sends in flight, and their sum. */
  async usage(organizationId: string, period: string): Promise<{ logged: number; held: number; used: number }> {
    const keys = allowanceKeys(this.namespace, organizationId, period);
    const [logged, held] = (await this.command('sendlineAllowanceUsed')(
      4,
      keys.holds,
      keys.holdCounts,
      keys.held,
      keys.logged,
      (this.options.now ?? Date.now)(),
    )) as [number, number];
    return { logged, held, used: logged + held };
  }

  /** Logged + held: what a send is checked against. */
  async used(organizationId: string, period: string): Promise<number> {
    return (await this.usage(organizationId, period)).used;
  }
}

function periodStart(period: string): number {
  const [year, month] = period.split('-').map(Number);
  return Date.UTC(year!, month! - 1, 1);
}

/**
 * The allowance view's writes: the projector adds each MessageAccepted of a batch to the batch's guarded
 * script (see ViewBatch), which counts it once per MessageID and releases its hold.
 */
export class AllowanceView {
  constructor(readonly namespace = 'sl') {}

  write(batch: ViewBatch, event: MessageAccepted): void {
    const { messageId, activeRecipients, submittedAt } = event.data;
    const { period, endsAt } = allowancePeriodBounds(submittedAt);
    const keys = allowanceKeys(this.namespace, event.metadata.organizationId, period);
    const marker = messageMarker(messageId);
    batch.count({
      seenKey: keys.seen(marker.bucket),
      member: marker.member,
      loggedKey: keys.logged,
      recipients: activeRecipients.length,
      holdsKey: keys.holds,
      holdCountsKey: keys.holdCounts,
      heldKey: keys.held,
      messageId,
      expireAt: Math.ceil((endsAt + KEEP_AFTER_PERIOD_MS) / 1000),
    });
  }

  /** The count from the log (no holds) of an organization's month. */
  async logged(redis: Redis, organizationId: string, period: string): Promise<number> {
    return Number((await redis.get(allowanceKeys(this.namespace, organizationId, period).logged)) ?? 0);
  }
}
