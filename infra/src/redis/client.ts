import { Cluster, Redis, type ClusterOptions, type Command, type RedisOptions } from 'ioredis';
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
  const nodes = clusterNodesOf(url);
  if (nodes) return createCluster(nodes, options);
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

/** The URL scheme of a Redis Cluster: `redis-cluster://host:port,host:port,…` (some of its nodes; the rest are found). */
export const REDIS_CLUSTER_SCHEME = 'redis-cluster:';

/** The nodes a `redis-cluster://` URL names, or undefined for a single Redis's URL. */
export function clusterNodesOf(url: string): { host: string; port: number }[] | undefined {
  if (!url.startsWith(`${REDIS_CLUSTER_SCHEME}//`)) return undefined;
  const list = url.slice(REDIS_CLUSTER_SCHEME.length + 2).replace(/\/.*$/, '');
  const nodes = list
    .split(',')
    .filter((node) => node.trim() !== '')
    .map((node) => {
      const [host, port] = node.trim().split(':');
      return { host: host!, port: Number(port ?? 6379) };
    });
  if (nodes.length === 0 || nodes.some(({ host, port }) => host === '' || !Number.isInteger(port)))
    throw new Error(`a Redis Cluster URL names its nodes as host:port, comma-separated: ${url}`);
  return nodes;
}

/** Whether a client is a Redis Cluster's (createRedis with a `redis-cluster://` URL). */
export function isCluster(redis: unknown): boolean {
  return redis instanceof Cluster;
}

/**
 * The values of `keys` in their order (null for a missing key): one MGET on a single Redis. A cluster answers an MGET
 * only for keys of one slot (CROSSSLOT otherwise), and keys that are each their own (a webhook call's, a message's)
 * fall on every master: there it is one GET a key, which auto-pipelining still sends in one write a master.
 */
export async function getMany(redis: Redis, keys: readonly string[]): Promise<(string | null)[]> {
  if (keys.length === 0) return [];
  if (!isCluster(redis)) return redis.mget(...keys);
  return Promise.all(keys.map((key) => redis.get(key)));
}

/** The master nodes of a cluster, or the client itself: what a SCAN of every key must go through. */
export function everyMaster(redis: Redis): Redis[] {
  return redis instanceof Cluster ? (redis as Cluster).nodes('master') : [redis];
}

/**
 * A Redis Cluster's client, behaving as createRedis's single-node client (the same fail-fast and reconnection
 * behaviour, the same Lua commands), typed as a Redis: every command the apps use is the same on both. What differs:
 * - a command goes to the master of its key's slot, and ioredis follows the cluster when a slot moves or a master
 *   fails over (MOVED/ASK, CLUSTERDOWN and a closed connection make it reload the slots and try again);
 * - a Lua script, a MULTI and a multi-key command must name keys of one slot only: Sendline's keys carry a hash tag
 *   for that (docs/services.md);
 * - an explicit pipeline whose keys span masters (the sender's ledger reading many messages, say) is sent as its
 *   separate commands, which auto-pipelining still sends in one write per master: a pipeline was never atomic.
 */
function createCluster(nodes: { host: string; port: number }[], options: RedisClientOptions): Redis {
  const clusterOptions: ClusterOptions = {
    lazyConnect: options.lazyConnect ?? false,
    enableOfflineQueue: true,
    enableAutoPipelining: true,
    // Our Lua commands are sent on their own: ioredis groups an auto-pipelined command by the slot of its first
    // argument, which for a defined command is the number of keys, not a key, so the script went to the wrong
    // master's pipeline and waited there (every reservation timed out under load). Sent on their own they go to their
    // keys' master, and EVALSHA falls back to EVAL on a master that does not know the script yet (a promoted replica).
    autoPipeliningIgnoredCommands: ['sendlineGuardedApply', 'sendlineReserveAllowance', 'sendlineAllowanceUsed'],
    clusterRetryStrategy: (attempt) => Math.min(attempt * 50, REDIS_RECONNECT_MAX_DELAY_MS),
    // A failover (a master killed, its replica promoted) answers CLUSTERDOWN or refuses connections for a few
    // seconds: ioredis reloads the slots and tries again at this pace, within the command's answer deadline.
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    slotsRefreshTimeout: 1000,
    // The slots are read again every 2 s, and at once when a command gets no answer (below): a command that timed
    // out says nothing to ioredis, which would otherwise keep sending a dead master's slots to it until a MOVED.
    slotsRefreshInterval: 2000,
    redisOptions: {
      maxRetriesPerRequest: 1,
      connectTimeout: 1000,
    },
  };
  return clusterFailFast(new Cluster(nodes, clusterOptions), options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS);
}

function clusterFailFast(cluster: Cluster, commandTimeoutMs: number): Redis {
  const redis = cluster as unknown as Redis;
  withAnswerDeadline(redis, commandTimeoutMs);
  definePositionCommands(redis);
  defineAllowanceCommands(redis);
  cluster.once('ready', () => {
    cluster.options.enableOfflineQueue = false;
  });
  cluster.on('error', () => undefined);
  spreadPipelines(cluster, commandTimeoutMs);
  const duplicate = cluster.duplicate.bind(cluster);
  redis.duplicate = ((override?: Partial<RedisOptions>) =>
    clusterFailFast(
      duplicate([], { enableOfflineQueue: true, ...(override as Partial<ClusterOptions>) }),
      commandTimeoutMs,
    )) as Redis['duplicate'];
  return redis;
}

type PipelineResults = [Error | null, unknown][] | null;

/**
 * A cluster's pipelines, explicit ones and the auto-pipelines every command goes through:
 * - one whose keys are on several masters runs as separate commands (ioredis refuses such a pipeline before sending
 *   anything: "All keys in the pipeline should belong to the same slots allocation group"); one within one slot (a
 *   guard and its WAIT, say) is sent as it is, on one connection;
 * - each has the answer deadline (see withAnswerDeadline): the cluster sends a pipeline's commands on the node's
 *   connection, not through its own sendCommand, and a pipeline to a master that was just killed would otherwise
 *   wait for the failover — and every auto-pipeline to that master queued behind it, so a request hung instead of
 *   failing as Redis being unavailable.
 */
function spreadPipelines(cluster: Cluster, commandTimeoutMs: number): void {
  const refreshSlots = () =>
    (cluster as unknown as { refreshSlotsCache?: (callback?: () => void) => void }).refreshSlotsCache?.(
      () => undefined,
    );
  const pipeline = cluster.pipeline.bind(cluster);
  cluster.pipeline = ((commands?: unknown[][]) => {
    const queued: unknown[][] = [...(commands ?? [])];
    const native = pipeline(commands as never);
    const exec = native.exec.bind(native);
    // ioredis's auto-pipelining calls exec with a callback: it is answered too.
    const run = async (): Promise<PipelineResults> => {
      try {
        return await exec();
      } catch (error) {
        if (!(error instanceof Error) || !/same slots allocation group/.test(error.message)) throw error;
        const target = cluster as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
        const settled = await Promise.allSettled(
          queued.map(([name, ...args]) => target[String(name)]!.call(cluster, ...args)),
        );
        return settled.map((result) =>
          result.status === 'fulfilled' ? [null, result.value] : [result.reason as Error, null],
        ) as PipelineResults;
      }
    };
    native.exec = ((callback?: (error: Error | null, results?: PipelineResults) => void) => {
      const results = withDeadline(run(), commandTimeoutMs, refreshSlots);
      // ioredis itself calls exec again to retry a cluster pipeline after a redirection or a lost connection, and
      // drops what it returns: a rejection no one awaits must not be an unhandled one (it would end the process).
      results.catch(() => undefined);
      if (callback)
        results.then(
          (value) => callback(null, value),
          (error: Error) => callback(error),
        );
      return results;
    }) as typeof native.exec;
    return new Proxy(native, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof property !== 'string' || typeof value !== 'function' || property === 'exec') return value;
        return (...args: unknown[]) => {
          const result = (value as (...a: unknown[]) => unknown).apply(target, args);
          if (result === target) {
            queued.push([property, ...args]);
            return receiver as unknown;
          }
          return result;
        };
      },
    });
  }) as Cluster['pipeline'];
}

/** `answer`, or "Command timed out" once `ms` passed and the answers already arrived were read (see withAnswerDeadline). */
function withDeadline<T>(answer: Promise<T>, ms: number, onTimeout: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (settled) return;
          settled = true;
          onTimeout();
          reject(new Error('Command timed out'));
        }),
      ms,
    );
    answer.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
