/**
 * The audit view (Redis, built from the never-compacted `accounts.history` topic): every account event of an
 * organization as the console's Audit page shows it. Its key layout and reads (view.ts), how the projector applies
 * a batch (apply.ts), its fingerprint per organization (fingerprint.ts), and its replay (rebuild.ts).
 */
export * from './view';
export * from './apply';
export * from './fingerprint';
export * from './rebuild';
