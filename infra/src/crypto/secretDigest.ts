import { createHash, randomBytes } from 'node:crypto';

/** A fresh random secret (a console session id, a sign-in token, its CSRF token): 32 bytes (256 bits), base64url. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * How a bearer secret is stored and looked up: its SHA-256, lowercase hex (the secret itself is never stored). API
 * keys (hashApiKey), console sessions and sign-in tokens all go by it.
 */
export function secretDigest(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}
