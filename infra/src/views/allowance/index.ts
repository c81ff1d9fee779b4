/**
 * The monthly sending allowance (Redis): its key layout, the API's counter and the view the projector counts
 * the log into (view.ts), how the projector applies a batch to it (apply.ts), its fingerprint per organization
 * (fingerprint.ts), and how a replay rebuilds it into a fresh namespace and swaps it in (rebuild.ts).
 */
export * from './view';
export * from './apply';
export * from './fingerprint';
export * from './rebuild';
