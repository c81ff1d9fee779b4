import { randomBytes } from 'node:crypto';
import { formatApiKey, keyPrefixForDisplay, type ApiKeyMode } from '@sendline/domain';
import { hashApiKey } from '@sendline/infra';

/** Random octets in an API key's secret: 32 octets, 43 base64url characters. */
export const API_KEY_SECRET_OCTETS = 32;

/**
 * A new API key: the token `sl_<mode>_<43 random base64url characters>` from node:crypto, which only the caller
 * ever sees, and what the `IssueApiKey` command carries instead (its SHA-256 and its first characters).
 * An unknown mode is left to the organization decider to refuse.
 */
export function newApiKey(mode: string): { token: string; keyHash: string; keyPrefix: string } {
  const token = formatApiKey(mode as ApiKeyMode, randomBytes(API_KEY_SECRET_OCTETS).toString('base64url'));
  return { token, keyHash: hashApiKey(token), keyPrefix: keyPrefixForDisplay(token) };
}
