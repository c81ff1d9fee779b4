import { checksumOf, FINGERPRINT_CONCURRENCY, inChunks, type OrganizationFingerprint } from '../rebuildable';
import type { AccountsView } from './view';

/**
 * Per organization: the organization record, members, domains, keys and each key's authentication record, and its
 * webhooks (so a replay that lost or changed a webhook's configuration is told apart).
 */
export async function accountFingerprints(
  view: AccountsView,
  organizations: string[],
): Promise<Map<string, OrganizationFingerprint>> {
  const prints = await inChunks(organizations, FINGERPRINT_CONCURRENCY, async (organizationId) => {
    const [organization, members, domains, keys, webhooks, server, inboundRules] = await Promise.all([
      view.organization(organizationId),
      view.members(organizationId),
      view.domains(organizationId),
      view.apiKeys(organizationId),
      view.webhooks(organizationId),
      view.serverSettings(organizationId),
      view.inboundRules(organizationId),
    ]);
    const byHash = await Promise.all([...keys.values()].map((key) => view.apiKeyByHash(key.keyHash)));
    const inboundOwner = server ? await view.organizationOfInboundHash(server.inboundHash) : null;
    const count =
      (organization ? 1 : 0) + members.size + domains.size + keys.size + webhooks.length + inboundRules.length;
    return {
      organizationId,
      count,
      checksum: checksumOf({
        organization,
        members,
        domains,
        keys,
        byHash,
        webhooks,
        server,
        inboundOwner,
        inboundRules,
      }),
      counts: {
        organizations: organization ? 1 : 0,
        members: members.size,
        domains: domains.size,
        keys: keys.size,
        webhooks: webhooks.length,
        inboundRules: inboundRules.length,
      },
    };
  });
  return new Map(prints.filter((p) => p.count > 0).map((p) => [p.organizationId, p]));
}
