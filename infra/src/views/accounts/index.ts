/**
 * The accounts view (Redis, built from the `accounts` topic): its key layout, reads and writes (view.ts), how
 * the projector applies a batch to it (apply.ts), its fingerprint per organization (fingerprint.ts), and how a
 * replay rebuilds it into a fresh namespace and swaps it in (rebuild.ts).
 */
export * from './view';
export * from './apply';
export * from './fingerprint';
export * from './rebuild';
