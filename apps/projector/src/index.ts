export { startProjector, type ProjectorOptions, type RunningProjector } from './projector';
export {
  accountsHandler,
  activityHandler,
  allowanceHandler,
  positionedHandler,
  REDIS_PROJECTIONS,
  groupOf,
  PROJECTIONS,
  suppressionsHandler,
  topicsOf,
  type BatchHandler,
  type ProjectionName,
} from './projections';
export { RetentionSweep, type RetentionSweepOptions } from './retention';
export { ProjectorMetrics, serveMetrics } from './metrics';
export { committedOffsets, consumerLag, endOffsets, remaining, type Offsets, type PartitionLag } from './offsets';
export {
  replayView,
  type OrganizationDifference,
  type ReplayableView,
  type ReplayOptions,
  type ReplayReport,
} from './replay';
export { accountFingerprints, allowanceFingerprints, canonicalJson, suppressionFingerprints } from './fingerprints';
