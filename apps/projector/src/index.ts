/**
 * The projector: one consumer group per view applying its topic to it (projector.ts, which views from which
 * topics in projections.ts), the accounts archiver feeding the audit's never-compacted history (archiver.ts), the
 * activity store's retention sweep (retention.ts), its metrics (metrics.ts),
 * consumer offsets and lag (offsets.ts), and the replay (replay.ts), which rebuilds a view beside the live one,
 * compares and swaps it, through the view's own RebuildableView (infra/src/views/).
 */
export { startProjector, type ProjectorOptions, type RunningProjector } from './projector';
export { archiverGroupOf, REDIS_PROJECTIONS, groupOf, PROJECTIONS, topicsOf, type ProjectionName } from './projections';
export { ARCHIVER, startAccountsArchiver, type ArchiverOptions } from './archiver';
export { RetentionSweep, type RetentionSweepOptions } from './retention';
export { ProjectorMetrics, serveMetrics } from './metrics';
export { committedOffsets, consumerLag, endOffsets, remaining, type Offsets, type PartitionLag } from './offsets';
export {
  replayView,
  type OrganizationDifference,
  type ReplayableView,
  type ReplayOptions,
  type ReplayProgress,
  type ReplayReport,
} from './replay';
