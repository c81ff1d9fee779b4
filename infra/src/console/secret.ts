import { createHash, randomBytes } from 'node:crypto';

/** A fresh random secret: 32 bytes (256 bits), base64url. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** How a secret is stored and looked up: its SHA-256, hex (the secret itself is never stored). */
export function secretDigest(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
