import type { Redis } from '../../redis/client';
import { positionsKeyOf } from '../positions';
import type { RebuildableView } from '../rebuildable';
import { redisRebuild } from '../redisRebuild';
import { templatesHandler } from './apply';
import { templateFingerprints } from './fingerprint';
import { TemplatesView } from './view';

/** The templates view rebuilt into a fresh namespace, for a replay: its keys are `<ns>:{templates}:*`. */
export function rebuildTemplates(redis: Redis, namespace: string, id: string): RebuildableView {
  const view = (ns: string) => new TemplatesView(redis, ns);
  return redisRebuild(
    redis,
    {
      name: 'templates',
      patterns: (ns) => [`${ns}:{templates}:*`],
      organizations: (ns) => view(ns).organizations(),
      fingerprints: (ns, organizations) => templateFingerprints(view(ns), organizations),
      handler: (ns) => templatesHandler(view(ns), redis, positionsKeyOf(ns, 'templates')),
    },
    namespace,
    id,
  );
}
