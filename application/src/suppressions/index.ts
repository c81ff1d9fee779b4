/**
 * An organization's suppressions changed by hand: the console's manual suppressions (reason ManualSuppression) and
 * addresses deleted (the API's suppressions delete, the console's remove, a bounce reactivated), through the
 * suppression decider.
 */
export * from './manualSuppressions';
export * from './deletions';
