import { checksumOf, FINGERPRINT_CONCURRENCY, inChunks, type OrganizationFingerprint } from '../rebuildable';
import type { AccountsView } from './view';

/** Per organization: the organization record, members, domains, keys and each key's authentication record. */
export async function accountFingerprints(
  view: AccountsView,
  organizations: string[],
): Promise<Map<string, OrganizationFingerprint>> {
  const prints = await inChunks(organizations, FINGERPRINT_CONCURRENCY, async (organizationId) => {
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
      checksum: checksumOf({ organization, members, domains, keys, byHash }),
      counts: { organizations: organization ? 1 : 0, members: members.size, domains: domains.size, keys: keys.size },
    };
  });
  return new Map(prints.filter((p) => p.count > 0).map((p) => [p.organizationId, p]));
}
