import { everyMaster, isCluster, type Redis } from '../redis/client';
import type { BatchHandler } from './apply';
import { positionsKeyOf } from './positions';
import type { OrganizationFingerprint, RebuildableView } from './rebuildable';

/**
 * Every key matching `pattern` (SCAN, so Redis is never held long). On a Redis Cluster, each master is scanned
 * (a SCAN answers for its own node only). For a replay or a test's clean-up, never on a request's path.
 */
export async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  for (const node of everyMaster(redis)) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
  }
  return [...new Set(keys)];
}

/**
 * Removes `keys` (UNLINK, 500 at a time, so no command grows without bound). On a Redis Cluster one key a command
 * (a multi-key UNLINK must name keys of one slot), auto-pipelined per master.
 */
export async function unlinkKeys(redis: Redis, keys: readonly string[]): Promise<void> {
  if (isCluster(redis)) {
    for (let i = 0; i < keys.length; i += 500)
      await Promise.all(keys.slice(i, i + 500).map((key) => redis.unlink(key)));
    return;
  }
  for (let i = 0; i < keys.length; i += 500) await redis.unlink(...keys.slice(i, i + 500));
}

/** Removes every key matching `pattern` (a test's or a benchmark's namespace when it is done). */
export async function deleteKeys(redis: Redis, pattern: string): Promise<void> {
  await unlinkKeys(redis, await scanKeys(redis, pattern));
}

/** What a Redis view tells the replay about itself, for a namespace: its keys, its organizations, its apply. */
export interface RedisViewLayout {
  /** The view's name: its positions hash is `<ns>:positions:{<name>}`. */
  name: string;
  /** Patterns of the view's keys in a namespace (its positions hash aside). */
  patterns(namespace: string): string[];
  /** Whether a key the patterns match is the view's (another view's keys may match them too); default all. */
  owns?(namespace: string, key: string): boolean;
  /** The organizations a namespace holds anything for. */
  organizations(namespace: string): Promise<string[]>;
  fingerprints(namespace: string, organizations: string[]): Promise<Map<string, OrganizationFingerprint>>;
  /** Applies batches to the view in a namespace, with its positions. */
  handler(namespace: string): BatchHandler;
}

/**
 * A Redis view rebuilt into a fresh namespace (`<live>.replay.<id>`) and swapped in by renaming its keys in
 * one MULTI. The view's positions are among its keys: a rebuilt view carries the positions it was built up to.
 * Every key of a view carries the view's name as its hash tag (`<ns>:{<view>}:…`), the namespace outside it, so
 * on a Redis Cluster the rebuilt keys and the live ones are in one slot and the MULTI of renames is allowed.
 */
export function redisRebuild(redis: Redis, layout: RedisViewLayout, namespace: string, id: string): RebuildableView {
  const live = namespace;
  const rebuilt = `${live}.replay.${id}`;
  if (/[*?[\]\s]/.test(live)) throw new Error(`namespace ${JSON.stringify(live)} holds glob characters`);
  const patterns = (ns: string) => [...layout.patterns(ns), positionsKeyOf(ns, layout.name)];
  const keysOf = async (ns: string) =>
    (await Promise.all(patterns(ns).map((p) => scanKeys(redis, p))))
      .flat()
      .filter((key) => layout.owns?.(ns, key) ?? true);
  const removeKeys = (keys: string[]) => unlinkKeys(redis, keys);

  return {
    live,
    rebuilt,
    prepare: async () => {
      const leftovers = await keysOf(rebuilt);
      if (leftovers.length > 0) await removeKeys(leftovers);
    },
    apply: layout.handler(rebuilt),
    settle: async () => undefined,
    fingerprints: async () => {
      const organizations = [
        ...new Set([...(await layout.organizations(live)), ...(await layout.organizations(rebuilt))]),
      ];
      const [a, b] = await Promise.all([
        layout.fingerprints(live, organizations),
        layout.fingerprints(rebuilt, organizations),
      ]);
      return { live: a, rebuilt: b };
    },
    swap: async () => {
      // One MULTI: readers see the old view or the new one, never a mix.
      const fresh = await keysOf(rebuilt);
      const renamed = new Set(fresh.map((key) => live + key.slice(rebuilt.length)));
      const stale = (await keysOf(live)).filter((key) => !renamed.has(key));
      const multi = redis.multi();
      for (const key of fresh) multi.rename(key, live + key.slice(rebuilt.length));
      for (const key of stale) multi.del(key);
      const results = await multi.exec();
      const failed = results?.find(([error]) => error);
      if (failed?.[0]) throw failed[0];
    },
    applyToLive: layout.handler(live),
    settleLive: async () => undefined,
    discard: async () => removeKeys(await keysOf(rebuilt)),
    retire: async () => undefined,
  };
}
