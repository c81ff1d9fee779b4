import { checksumOf, FINGERPRINT_CONCURRENCY, inChunks, type OrganizationFingerprint } from '../rebuildable';
import type { AuditView } from './view';

/** Per organization: how many audit entries, and a hash of all of them (a lost or changed entry tells). */
export async function auditFingerprints(
  view: AuditView,
  organizations: string[],
): Promise<Map<string, OrganizationFingerprint>> {
  const prints = await inChunks(organizations, FINGERPRINT_CONCURRENCY, async (organizationId) => {
    const entries = (await view.all(organizationId)).sort();
    return {
      organizationId,
      count: entries.length,
      checksum: checksumOf(entries),
      counts: { entries: entries.length },
    };
  });
  return new Map(prints.filter((p) => p.count > 0).map((p) => [p.organizationId, p]));
}
