export { startProjector, type ProjectorOptions, type RunningProjector } from './projector';
export {
  accountsHandler,
  activityHandler,
  groupOf,
  PROJECTIONS,
  suppressionsHandler,
  topicsOf,
  type BatchHandler,
  type ProjectionName,
} from './projections';
export { RetentionSweep, type RetentionSweepOptions } from './retention';
export { ProjectorMetrics, serveMetrics } from './metrics';
export {
  committedOffsets,
  consumerLag,
  endOffsets,
  readRange,
  remaining,
  type Offsets,
  type PartitionLag,
} from './offsets';
export {
  replayView,
  type OrganizationDifference,
  type ReplayableView,
  type ReplayOptions,
  type ReplayReport,
} from './replay';
export { accountFingerprints, canonicalJson, suppressionFingerprints } from './fingerprints';
