/** The suppressions the console adds by hand (reason ManualSuppression), through the suppression decider. */
export * from './manualSuppressions';
