import type { Redis } from '../../redis/client';
import { checksumOf, type OrganizationFingerprint } from '../rebuildable';
import { scanKeys } from '../redisRebuild';

/** Per organization: its count from the log per month (`<ns>:{allowance}:<org>:<period>:logged`). One scan for all. */
export async function allowanceFingerprints(
  redis: Redis,
  namespace: string,
  organizations: string[],
): Promise<Map<string, OrganizationFingerprint>> {
  const wanted = new Set(organizations);
  const sorted = (await scanKeys(redis, `${namespace}:{allowance}:*:logged`)).sort();
  const values: (string | null)[] = [];
  for (let i = 0; i < sorted.length; i += 1000) values.push(...(await redis.mget(...sorted.slice(i, i + 1000))));
  const months = new Map<string, Record<string, number>>();
  for (const [i, key] of sorted.entries()) {
    const [organizationId, period] = key.slice(`${namespace}:{allowance}:`.length).split(':');
    if (!organizationId || !period || !wanted.has(organizationId)) continue;
    const of = months.get(organizationId) ?? {};
    of[period] = Number(values[i] ?? 0);
    months.set(organizationId, of);
  }
  return new Map(
    [...months].map(([organizationId, byMonth]) => [
      organizationId,
      {
        organizationId,
        count: Object.keys(byMonth).length,
        checksum: checksumOf(byMonth),
        counts: { months: Object.keys(byMonth).length, recipients: Object.values(byMonth).reduce((a, b) => a + b, 0) },
      },
    ]),
  );
}
