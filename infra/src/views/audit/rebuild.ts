import type { Redis } from '../../redis/client';
import { positionsKeyOf } from '../positions';
import type { RebuildableView } from '../rebuildable';
import { redisRebuild, scanKeys } from '../redisRebuild';
import { auditHandler } from './apply';
import { auditFingerprints } from './fingerprint';
import { AuditView } from './view';

/** The audit view rebuilt into a fresh namespace from `accounts.history`, for a replay. Its keys: `<ns>:{audit}:*`. */
export function rebuildAudit(redis: Redis, namespace: string, id: string): RebuildableView {
  const view = (ns: string) => new AuditView(redis, ns);
  return redisRebuild(
    redis,
    {
      name: 'audit',
      patterns: (ns) => [view(ns).auditKey('*')],
      organizations: async (ns) =>
        (await scanKeys(redis, view(ns).auditKey('*'))).map((key) => view(ns).organizationOf(key)),
      fingerprints: (ns, organizations) => auditFingerprints(view(ns), organizations),
      handler: (ns) => auditHandler(view(ns), redis, positionsKeyOf(ns, 'audit')),
    },
    namespace,
    id,
  );
}
