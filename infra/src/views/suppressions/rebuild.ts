import type { Redis } from '../../redis/client';
import { positionsKeyOf } from '../positions';
import type { RebuildableView } from '../rebuildable';
import { redisRebuild, scanKeys } from '../redisRebuild';
import { suppressionsHandler } from './apply';
import { suppressionFingerprints } from './fingerprint';
import { SuppressionView } from './view';

/** The suppression view rebuilt into a fresh namespace (its keys: `<ns>:{suppressions}:*`), for a replay. */
export function rebuildSuppressions(redis: Redis, namespace: string, id: string): RebuildableView {
  const view = (ns: string) => new SuppressionView(redis, ns);
  return redisRebuild(
    redis,
    {
      name: 'suppressions',
      patterns: (ns) => [view(ns).keyOf('*')],
      organizations: async (ns) => {
        const ids = new Set<string>();
        const prefix = view(ns).keyOf('');
        for (const key of await scanKeys(redis, view(ns).keyOf('*'))) {
          if (key !== view(ns).organizationsKey) ids.add(key.slice(prefix.length));
        }
        for (const org of await view(ns).organizations()) ids.add(org);
        return [...ids];
      },
      fingerprints: (ns, organizations) => suppressionFingerprints(view(ns), organizations),
      handler: (ns) => suppressionsHandler(view(ns), redis, positionsKeyOf(ns, 'suppressions')),
    },
    namespace,
    id,
  );
}
