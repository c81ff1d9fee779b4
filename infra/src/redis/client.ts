import { Redis, type Command, type RedisOptions } from 'ioredis';
import { defineAllowanceCommands } from '../views/allowance/view';
import { definePositionCommands } from '../views/positions';

export type { Redis };

export interface RedisClientOptions {
  lazyConnect?: boolean;
  /**
   * How long a command may wait for its answer once sent (default 800 ms). Past it the command fails ("Command
   * timed out"), so a Redis that accepts connections and does not answer (hung, overloaded) costs a request at
   * most about twice this (auto-pipelining sends the next pipeline once the previous one settled), not a hang:
   * the API answers 503 within its 2 s promise.
   */
  commandTimeoutMs?: number;
}

const DEFAULT_COMMAND_TIMEOUT_MS = 800;

/** How long the client waits between reconnection attempts at most: a restarted Redis is found within this. */
export const REDIS_RECONNECT_MAX_DELAY_MS = 500;

/**
 * A Redis client that fails fast and heals by itself:
 * - until the first connection is ready, commands wait in the offline queue (a client used right after its
 *   creation just works, within `commandTimeoutMs`); from then on a command issued while the connection is down
 *   fails at once ("Stream isn't writeable"): queued, it would wait for the commands ahead of it to time out
 *   first, one auto-pipeline after the other, and a request would hang for seconds;
 * - commands in flight when the connection drops are tried once more on the next connection, then fail;
 * - it reconnects forever, every 50 ms growing to 500 ms, so a Redis that comes back is used again within half a
 *   second, without restarting the process.
 * A failure of this kind is recognised by `unavailableService` (availability.ts) as Redis being unavailable.
 */
export function createRedis(url: string, options: RedisClientOptions = {}): Redis {
  const redis = new Redis(url, {
    lazyConnect: options.lazyConnect ?? false,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    // ioredis's own command timeout is replaced by the answer deadline below (withAnswerDeadline).
    connectTimeout: 1000,
    retryStrategy: (attempt) => Math.min(attempt * 50, REDIS_RECONNECT_MAX_DELAY_MS),
    // Commands issued in the same tick (concurrent requests' lookups) leave in one write.
    enableAutoPipelining: true,
  });
  return failFast(redis, options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS);
}

/**
 * Fails a command whose answer has not come `ms` after it was sent ("Command timed out", as ioredis's own
 * commandTimeout) — but only once the answers that already arrived have been read. ioredis's timer fires in the
 * event loop's timers phase, before the poll phase reads the sockets: after a stall of our own process (a long GC
 * pause, the CPU taken by others) longer than `ms`, it failed commands whose answers were waiting, unread, in the
 * socket, and the API answered 503 "Redis unavailable" for a Redis that had answered in a millisecond. Here the
 * timer hands over to setImmediate, which runs after the poll phase: an answer that is there is read first.
 */
function withAnswerDeadline(redis: Redis, ms: number): void {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command: Command, ...rest: unknown[]) => {
    const answer = (send as (command: Command, ...rest: unknown[]) => unknown)(command, ...rest);
    if (!command.isResolved) {
      const timer = setTimeout(
        () =>
          setImmediate(() => {
            if (!command.isResolved) command.reject(new Error('Command timed out'));
          }),
        ms,
      );
      const clear = () => clearTimeout(timer);
      command.promise.then(clear, clear);
    }
    return answer;
  }) as Redis['sendCommand'];
}

/**
 * Turns the offline queue off once the client is first ready, and makes `duplicate()` give a client that behaves
 * the same (it would otherwise copy the queue switched off before its own first connection).
 */
function failFast(redis: Redis, commandTimeoutMs: number): Redis {
  withAnswerDeadline(redis, commandTimeoutMs);
  // Our Lua commands exist on every client from the start, so every auto-pipeline has them (see positions.ts).
  definePositionCommands(redis);
  defineAllowanceCommands(redis);
  redis.once('ready', () => {
    redis.options.enableOfflineQueue = false;
  });
  // Failures are seen by the commands that fail (and by /readyz); without a listener ioredis would print every
  // reconnection attempt, and a command-line tool would print more than its one line.
  redis.on('error', () => undefined);
  const duplicate = redis.duplicate.bind(redis) as (override?: Partial<RedisOptions>) => Redis;
  redis.duplicate = ((override?: Partial<RedisOptions>) =>
    failFast(duplicate({ enableOfflineQueue: true, ...override }), commandTimeoutMs)) as Redis['duplicate'];
  return redis;
}
