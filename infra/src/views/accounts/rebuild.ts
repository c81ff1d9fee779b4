import type { Redis } from '../../redis/client';
import { positionsKeyOf } from '../positions';
import type { RebuildableView } from '../rebuildable';
import { redisRebuild, scanKeys } from '../redisRebuild';
import { AuditView } from '../audit/view';
import { accountsHandler } from './apply';
import { accountFingerprints } from './fingerprint';
import { AccountsView } from './view';

/**
 * The accounts view rebuilt into a fresh namespace, for a replay. Its keys: `<ns>:apikey:*`, `<ns>:org:*`,
 * `<ns>:inbound`, `<ns>:inbounddomain:*` and `<ns>:organizations`, but not `<ns>:org:<id>:audit` (the audit view's, rebuilt from the history topic:
 * this replay neither renames nor deletes it).
 */
export function rebuildAccounts(redis: Redis, namespace: string, id: string): RebuildableView {
  const view = (ns: string) => new AccountsView(redis, ns);
  return redisRebuild(
    redis,
    {
      name: 'accounts',
      patterns: (ns) => [
        view(ns).apiKeyKey('*'),
        view(ns).organizationKey('*'),
        view(ns).organizationsKey,
        view(ns).inboundAddressesKey,
        view(ns).inboundDomainKey('*'),
      ],
      owns: (ns, key) => !new AuditView(redis, ns).isAuditKey(key),
      organizations: async (ns) => {
        const ids = new Set<string>();
        const prefix = view(ns).organizationKey('');
        for (const key of await scanKeys(redis, view(ns).organizationKey('*'))) {
          ids.add(key.slice(prefix.length).split(':')[0]!);
        }
        for (const org of await view(ns).organizations()) ids.add(org);
        return [...ids];
      },
      fingerprints: (ns, organizations) => accountFingerprints(view(ns), organizations),
      handler: (ns) => accountsHandler(view(ns), redis, positionsKeyOf(ns, 'accounts')),
    },
    namespace,
    id,
  );
}
