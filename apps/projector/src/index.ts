/**
 * The projector: one consumer group per view applying its topic to it (projector.ts; which views, from which
 * topics, with which handler: the registry, infra/src/views/registry.ts), the accounts archiver feeding the audit's never-compacted history
 * (archiver.ts), the activity store's retention sweep (retention.ts), its metrics (metrics.ts; consumer offsets and
 * lag: infra/src/kafka/offsets.ts). A view's replay is application's (application/src/replay/).
 */
export { startProjector, type ProjectorOptions, type RunningProjector } from './projector';
export { ARCHIVER, startAccountsArchiver, type ArchiverOptions } from './archiver';
export { RetentionSweep, type RetentionSweepOptions } from './retention';
export { ProjectorMetrics, serveMetrics } from './metrics';
