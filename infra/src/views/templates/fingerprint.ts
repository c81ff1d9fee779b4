import { checksumOf, FINGERPRINT_CONCURRENCY, inChunks, type OrganizationFingerprint } from '../rebuildable';
import type { TemplatesView } from './view';

/** Per organization: its templates (current versions), with every version of each, and the deleted ids. */
export async function templateFingerprints(
  view: TemplatesView,
  organizations: string[],
): Promise<Map<string, OrganizationFingerprint>> {
  const prints = await inChunks(organizations, FINGERPRINT_CONCURRENCY, async (organizationId) => {
    const library = await view.library(organizationId);
    const versions = await Promise.all([...library.templates.keys()].map((id) => view.versions(organizationId, id)));
    const count = library.templates.size + library.deletedIds.size;
    return {
      organizationId,
      count,
      checksum: checksumOf({ templates: library.templates, deleted: [...library.deletedIds], versions }),
      counts: { templates: library.templates.size, deleted: library.deletedIds.size },
    };
  });
  return new Map(prints.filter((p) => p.count > 0).map((p) => [p.organizationId, p]));
}
