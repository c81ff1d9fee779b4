import { checksumOf, FINGERPRINT_CONCURRENCY, inChunks, type OrganizationFingerprint } from '../rebuildable';
import type { SuppressionView } from './view';

/** Per organization: its suppressed addresses (count) and a hash of every entry. */
export async function suppressionFingerprints(
  view: SuppressionView,
  organizations: string[],
): Promise<Map<string, OrganizationFingerprint>> {
  const prints = await inChunks(organizations, FINGERPRINT_CONCURRENCY, async (organizationId) => {
    const entries = await view.list(organizationId);
    const sorted = [...entries].sort((a, b) => (a.emailAddress < b.emailAddress ? -1 : 1));
    return {
      organizationId,
      count: entries.length,
      checksum: checksumOf(sorted),
      counts: { suppressions: entries.length },
    };
  });
  return new Map(prints.filter((p) => p.count > 0).map((p) => [p.organizationId, p]));
}
