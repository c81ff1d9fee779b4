import type { Redis } from 'ioredis';
import { slotKey, StoreBehindError, type BatchRange, type ConsumerPositions } from '../kafka/eventStore/positions';

/**
 * Views that keep their position with their data.
 *
 * A Redis view built from a topic records, per topic-partition, the offset of the last event it applied, in a
 * hash next to its data (`<ns>:positions:{<view>}`, field `<topic>:<partition>`), written by the same Lua script
 * as the view's changes. A Redis that lost its last writes (a crash with `appendfsync everysec`, a restore) has
 * lost the position with them, so the projector resumes from where the view really is, not from the consumer
 * group's committed offset; and an event at or below the position is skipped, so a batch applied again changes
 * nothing.
 */

/** What a view writes for an event: the commands its `apply` and the projector share. */
export interface ViewWriter {
  hset(key: string, field: string, value: string): unknown;
  hsetnx(key: string, field: string, value: string): unknown;
  hdel(key: string, field: string): unknown;
  sadd(key: string, member: string): unknown;
  zadd(key: string, score: number, member: string): unknown;
}

/** The view's position does not reach the batch: events before it are missing from the view (it lost writes). */
export class ViewBehindError extends StoreBehindError {
  constructor(topic: string, partition: number, nextOffset: bigint) {
    super(
      'ViewBehind',
      `the view holds ${topic}:${partition} only up to offset ${nextOffset - 1n}`,
      topic,
      partition,
      nextOffset,
    );
    this.name = 'ViewBehindError';
  }
}

// KEYS[1]: the positions hash; KEYS[2..]: the keys the operations name.
// ARGV[1]: the slot, ARGV[2]: `from` ('' = no check), ARGV[3]: the batch's last offset, then operations:
// offset, name, count of arguments, arguments (key arguments are indexes into KEYS).
// Returns -2 - (the view's next offset) when the view is behind `from` (nothing written), else the new position.
const GUARDED_APPLY = `
local stored = redis.call('HGET', KEYS[1], ARGV[1])
local applied = -1
if stored then applied = tonumber(stored) end
if ARGV[2] ~= '' and applied + 1 < tonumber(ARGV[2]) then return -2 - (applied + 1) end
local i = 4
while i <= #ARGV do
  local offset = tonumber(ARGV[i])
  local name = ARGV[i + 1]
  local n = tonumber(ARGV[i + 2])
  local a = {}
  for j = 1, n do a[j] = ARGV[i + 2 + j] end
  i = i + 3 + n
  if offset > applied then
    if name == 'hset' then redis.call('HSET', KEYS[tonumber(a[1])], a[2], a[3])
    elseif name == 'hsetnx' then redis.call('HSETNX', KEYS[tonumber(a[1])], a[2], a[3])
    elseif name == 'hdel' then redis.call('HDEL', KEYS[tonumber(a[1])], a[2])
    elseif name == 'sadd' then redis.call('SADD', KEYS[tonumber(a[1])], a[2])
    elseif name == 'zadd' then redis.call('ZADD', KEYS[tonumber(a[1])], a[2], a[3])
    elseif name == 'count' then
      -- The allowance: a message counts once per organization and month, by its MessageID's marker; its hold,
      -- if the API placed one, is released either way (the message is in the log now).
      local seen, logged, holds, counts, held = KEYS[tonumber(a[1])], KEYS[tonumber(a[3])], KEYS[tonumber(a[5])], KEYS[tonumber(a[6])], KEYS[tonumber(a[7])]
      local expireAt = tonumber(a[9])
      if redis.call('SADD', seen, a[2]) == 1 then
        redis.call('INCRBY', logged, tonumber(a[4]))
        redis.call('EXPIREAT', seen, expireAt)
        redis.call('EXPIREAT', logged, expireAt)
      end
      local hold = redis.call('HGET', counts, a[8])
      if hold then
        redis.call('HDEL', counts, a[8])
        redis.call('ZREM', holds, a[8])
        if redis.call('DECRBY', held, tonumber(hold)) < 0 then redis.call('SET', held, 0, 'KEEPTTL') end
      end
    else
      return redis.error_reply('unknown view operation ' .. name)
    end
  end
end
local last = tonumber(ARGV[3])
if last > applied then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return last
end
return applied
`;

const COMMAND = 'sendlineGuardedApply';

/**
 * The writes of one batch of one partition to a Redis view, each tagged with its event's offset, applied in
 * one Lua script together with the view's position: all or nothing, events at or below the position skipped,
 * and nothing at all when the view is behind the batch (`ViewBehindError`).
 */
export class ViewBatch implements ViewWriter {
  private readonly keys = new Map<string, number>();
  private readonly args: string[] = [];
  private offset = '0';
  /** How many operations the batch holds. */
  size = 0;

  constructor(readonly positionsKey: string) {
    this.keys.set(positionsKey, 1);
  }

  /** The offset of the event whose writes follow. */
  at(offset: string): this {
    this.offset = offset;
    return this;
  }

  private key(key: string): string {
    let index = this.keys.get(key);
    if (index === undefined) {
      index = this.keys.size + 1;
      this.keys.set(key, index);
    }
    return String(index);
  }

  private op(name: string, args: string[]): this {
    this.args.push(this.offset, name, String(args.length), ...args);
    this.size++;
    return this;
  }

  hset(key: string, field: string, value: string): this {
    return this.op('hset', [this.key(key), field, value]);
  }
  hsetnx(key: string, field: string, value: string): this {
    return this.op('hsetnx', [this.key(key), field, value]);
  }
  hdel(key: string, field: string): this {
    return this.op('hdel', [this.key(key), field]);
  }
  sadd(key: string, member: string): this {
    return this.op('sadd', [this.key(key), member]);
  }
  zadd(key: string, score: number, member: string): this {
    return this.op('zadd', [this.key(key), String(score), member]);
  }

  /** The allowance's count of one MessageAccepted (see AllowanceView). */
  count(op: {
    seenKey: string;
    member: string;
    loggedKey: string;
    recipients: number;
    holdsKey: string;
    holdCountsKey: string;
    heldKey: string;
    messageId: string;
    expireAt: number;
  }): this {
    return this.op('count', [
      this.key(op.seenKey),
      op.member,
      this.key(op.loggedKey),
      String(op.recipients),
      this.key(op.holdsKey),
      this.key(op.holdCountsKey),
      this.key(op.heldKey),
      op.messageId,
      String(op.expireAt),
    ]);
  }

  /** Applies the writes and moves the position to `range.to`; throws ViewBehindError when the view is behind `from`. */
  async apply(redis: Redis, range: BatchRange): Promise<bigint> {
    const keys = [...this.keys.keys()];
    definePositionCommands(redis);
    const run = (redis as unknown as Record<string, (...args: unknown[]) => Promise<number>>)[COMMAND]!;
    const result = await run.call(
      redis,
      keys.length,
      ...keys,
      slotKey(range.topic, range.partition),
      range.from ?? '',
      range.to,
      ...this.args,
    );
    if (result <= -2) throw new ViewBehindError(range.topic, range.partition, BigInt(-2 - result));
    return BigInt(result);
  }
}

/**
 * Defines the guarded-apply Lua command on a client. createRedis does it when the client is made: ioredis copies a
 * client's defined commands into each auto-pipeline when the pipeline is created, so a command defined later, in a
 * tick whose pipeline already exists, is missing from it; the call fails, and the pipeline then answers fewer
 * results than it has callbacks and throws an uncaught TypeError ("results[i] is not iterable") that killed the
 * projector (seen once in the chaos suite). Here only for a client made some other way.
 */
export function definePositionCommands(redis: Redis): void {
  if (!(COMMAND in redis)) redis.defineCommand(COMMAND, { lua: GUARDED_APPLY });
}

/**
 * A view's positions: the offset of the last event it applied, per topic-partition. The event store's consumer
 * resumes each partition from them and advances them (the projector passes them in as `ConsumeOptions.positions`).
 */
export class ViewPositions implements ConsumerPositions {
  constructor(
    private readonly redis: Redis,
    readonly key: string,
  ) {}

  async applied(topic: string, partition: number): Promise<bigint | null> {
    const value = await this.redis.hget(this.key, slotKey(topic, partition));
    return value === null ? null : BigInt(value);
  }

  async all(): Promise<Map<string, bigint>> {
    const values = await this.redis.hgetall(this.key);
    return new Map(Object.entries(values).map(([slot, offset]) => [slot, BigInt(offset)]));
  }

  /** Records that every event up to `offset` was dealt with (dead-lettered, say), when the position is below it. */
  async advance(topic: string, partition: number, offset: string): Promise<void> {
    await new ViewBatch(this.key).apply(this.redis, { topic, partition, from: null, to: offset });
  }
}

/**
 * The positions hash of a view: `<ns>:positions:{<view>}`. The view's name is the hash tag of every key of the view
 * (`<ns>:{<view>}:…`): on a Redis Cluster the guarded script's keys are then in one slot. (Outside the view's own
 * prefix, so a replay's patterns of the view's keys do not match it twice.)
 */
export const positionsKeyOf = (namespace: string, view: string) => `${namespace}:positions:{${view}}`;
