/**
 * The templates view (Redis, built from the `accounts` topic): every version of an organization's templates
 * (view.ts), how the projector applies a batch (apply.ts), its fingerprint per organization (fingerprint.ts), and
 * its rebuild for a replay (rebuild.ts).
 */
export * from './view';
export * from './apply';
export * from './fingerprint';
export * from './rebuild';
