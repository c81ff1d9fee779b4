import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { InfrastructureError } from '../errors';

const VERSION = 'v1';

/**
 * The key that encrypts secrets at rest (DKIM private keys): 32 bytes, given as
 * hex or base64 in SENDLINE_SECRET_KEY. `npm start` creates one under .local/ for
 * development; production passes its own.
 */
export function secretKeyFromEnv(env: NodeJS.ProcessEnv = process.env): Buffer {
  const raw = env.SENDLINE_SECRET_KEY;
  if (!raw) {
    throw new InfrastructureError('MissingSecretKey', 'SENDLINE_SECRET_KEY is not set (32 bytes, hex or base64)', {
      retriable: false,
    });
  }
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) {
    throw new InfrastructureError(
      'BadSecretKey',
      'SENDLINE_SECRET_KEY must be 32 bytes (64 hex characters or base64)',
      { retriable: false },
    );
  }
  return key;
}

/** AES-256-GCM: `v1.<iv>.<tag>.<ciphertext>`, each part base64url. */
export function encryptSecret(plaintext: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [
    VERSION,
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    body.toString('base64url'),
  ].join('.');
}

export function decryptSecret(sealed: string, key: Buffer): string {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== VERSION || !iv || !tag || body === undefined) {
    throw new InfrastructureError('BadCiphertext', 'not a sealed secret of this service', { retriable: false });
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch (cause) {
    throw new InfrastructureError('SecretKeyMismatch', 'the secret cannot be opened with this SENDLINE_SECRET_KEY', {
      retriable: false,
      cause,
    });
  }
}
