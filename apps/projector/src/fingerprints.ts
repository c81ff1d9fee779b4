import { createHash } from 'node:crypto';
import type { AccountsView, OrganizationFingerprint, Redis, SuppressionView } from '@sendline/infra';

/** JSON with object keys and Map entries sorted, so equal content hashes equally. */
export function canonicalJson(value: unknown): string {
  if (value instanceof Map) return canonicalJson(Object.fromEntries([...value].sort(([a], [b]) => (a < b ? -1 : 1))));
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function inChunks<T, R>(items: T[], size: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) results.push(...(await Promise.all(items.slice(i, i + size).map(run))));
  return results;
}

/** Per organization: its suppressed addresses (count) and a hash of every entry. */
export async function suppressionFingerprints(
  view: SuppressionView,
  organizations: string[],
): Promise<Map<string, OrganizationFingerprint>> {
  const prints = await inChunks(organizations, 100, async (organizationId) => {
    const entries = await view.list(organizationId);
    const sorted = [...entries].sort((a, b) => (a.emailAddress < b.emailAddress ? -1 : 1));
    return {
      organizationId,
      count: entries.length,
      checksum: sha256(canonicalJson(sorted)),
      counts: { suppressions: entries.length },
    };
  });
  return new Map(prints.filter((p) => p.count > 0).map((p) => [p.organizationId, p]));
}

/** Per organization: the organization record, members, domains, keys and each key's authentication record. */
export async function accountFingerprints(
  view: AccountsView,
  organizations: string[],
): Promise<Map<string, OrganizationFingerprint>> {
  const prints = await inChunks(organizations, 50, async (organizationId) => {
    const [organization, members, domains, keys] = await Promise.all([
      view.organization(organizationId),
      view.members(organizationId),
      view.domains(organizationId),
      view.apiKeys(organizationId),
    ]);
    const byHash = await Promise.all([...keys.values()].map((key) => view.apiKeyByHash(key.keyHash)));
    const count = (organization ? 1 : 0) + members.size + domains.size + keys.size;
    return {
      organizationId,
      count,
      checksum: sha256(canonicalJson({ organization, members, domains, keys, byHash })),
      counts: { organizations: organization ? 1 : 0, members: members.size, domains: domains.size, keys: keys.size },
    };
  });
  return new Map(prints.filter((p) => p.count > 0).map((p) => [p.organizationId, p]));
}

/** Per organization: its count from the log per month (`<ns>:allowance:<org>:<period>:logged`). One scan for all. */
export async function allowanceFingerprints(
  redis: Redis,
  namespace: string,
  organizations: string[],
): Promise<Map<string, OrganizationFingerprint>> {
  const wanted = new Set(organizations);
  const keys = new Set<string>();
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${namespace}:allowance:*:logged`, 'COUNT', 1000);
    cursor = next;
    for (const key of found) keys.add(key);
  } while (cursor !== '0');
  const sorted = [...keys].sort();
  const values: (string | null)[] = [];
  for (let i = 0; i < sorted.length; i += 1000) values.push(...(await redis.mget(...sorted.slice(i, i + 1000))));
  const months = new Map<string, Record<string, number>>();
  for (const [i, key] of sorted.entries()) {
    const [organizationId, period] = key.slice(`${namespace}:allowance:`.length).split(':');
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
        checksum: sha256(canonicalJson(byMonth)),
        counts: { months: Object.keys(byMonth).length, recipients: Object.values(byMonth).reduce((a, b) => a + b, 0) },
      },
    ]),
  );
}
