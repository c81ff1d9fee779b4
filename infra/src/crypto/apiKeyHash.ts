import { secretDigest } from './secretDigest';

/**
 * SHA-256 of an API key token, lowercase hex: what the `ApiKeyIssued` event and the accounts view keep, and what
 * the API looks a request's key up by. Here, beside the view, so that the API authenticates without depending on
 * the console's use cases (application/), which issue the keys.
 */
export function hashApiKey(token: string): string {
  return secretDigest(token);
}
