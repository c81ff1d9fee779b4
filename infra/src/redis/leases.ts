import type { Redis } from 'ioredis';

/**
 * Leases on one key each: a run that must be the only one across every copy of an app (the sender's run of a message,
 * a webhook call) writes its token into the key with a time to live, renews it while it runs, and gives it back at the
 * end. A copy killed mid-run holds its lease until the key expires. One key per script, so a lease works the same on a
 * Redis Cluster. How a lease is taken differs by use (the sender's waits on a bare key; a webhook call's key also
 * holds the call's outcome: infra/src/webhooks/deliveryLog.ts); renewing and giving back are the same, and are here.
 */

/** Extends the key's life only while it holds the token. */
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
/** Deletes the key only while it holds the token. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** Renews the leases every third of their life until the returned function is called (failures wait for the next turn). */
export function renewLeases(redis: Redis, keys: readonly string[], token: string, ttlMs: number): () => void {
  const renewal = setInterval(
    () => void Promise.all(keys.map((key) => redis.eval(RENEW, 1, key, token, String(ttlMs)))).catch(() => undefined),
    ttlMs / 3,
  );
  renewal.unref();
  return () => clearInterval(renewal);
}

/**
 * Gives back each key still holding the token, one script per key written back to back (one round trip's wait in
 * all; not one pipeline, which may not span a cluster's slots). Resolves to which keys were given back.
 */
export async function releaseLeases(redis: Redis, keys: readonly string[], token: string): Promise<boolean[]> {
  const results = await Promise.all(keys.map((key) => redis.eval(RELEASE, 1, key, token)));
  return results.map((value) => value === 1);
}
