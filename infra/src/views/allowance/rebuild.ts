import type { Redis } from '../../redis/client';
import { positionsKeyOf } from '../positions';
import type { RebuildableView } from '../rebuildable';
import { redisRebuild, scanKeys } from '../redisRebuild';
import { allowanceHandler } from './apply';
import { allowanceFingerprints } from './fingerprint';
import { AllowanceView } from './view';

/**
 * The allowance view rebuilt into a fresh namespace, for a replay. Its keys are `<ns>:{allowance}:*`; the holds
 * (`<ns>:holds:{allowance}:*`, in the view's slot for the scripts that count and release them) are the API's, not the view's, and are left alone.
 */
export function rebuildAllowance(redis: Redis, namespace: string, id: string): RebuildableView {
  return redisRebuild(
    redis,
    {
      name: 'allowance',
      patterns: (ns) => [`${ns}:{allowance}:*`],
      organizations: async (ns) => {
        const ids = new Set<string>();
        for (const key of await scanKeys(redis, `${ns}:{allowance}:*:logged`)) {
          ids.add(key.slice(`${ns}:{allowance}:`.length).split(':')[0]!);
        }
        return [...ids];
      },
      fingerprints: (ns, organizations) => allowanceFingerprints(redis, ns, organizations),
      handler: (ns) => allowanceHandler(new AllowanceView(ns), redis, positionsKeyOf(ns, 'allowance')),
    },
    namespace,
    id,
  );
}
