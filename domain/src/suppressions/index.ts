/**
 * Suppressions: an address an organization no longer sends to (hard bounce, or manual), and the suppression
 * decider (decide.ts) with its events and origins (suppression.ts).
 */
export {
  decideSuppression,
  suppressionDecider,
  suppressionForHardBounce,
  suppressionForSpamComplaint,
  type AddSuppression,
  type AddSuppressionData,
  type DeleteSuppression,
  type DeleteSuppressionData,
  type SuppressionCommand,
  type SuppressionDecider,
} from './decide';
export {
  ALLOWED_ORIGINS,
  evolveSuppression,
  initialSuppressionState,
  SUPPRESSION_EVENT_TYPES,
  SUPPRESSION_ORIGINS,
  SUPPRESSION_REASONS,
  suppressionKey,
  type SuppressionAdded,
  type SuppressionAddedData,
  type SuppressionDeleted,
  type SuppressionDeletedData,
  type SuppressionEvent,
  type SuppressionOrigin,
  type SuppressionReason,
  type SuppressionState,
} from './suppression';
