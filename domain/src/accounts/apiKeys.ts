import { DomainError } from '../domainError';
import type { ApiKeyIssued, ApiKeyRevoked } from './organization';
import type { ApiKeyMode, Scope } from './rules';

/**
 * API key tokens: `sl_test_<secret>` and `sl_live_<secret>` ('sl' for Sendline; the mode is told by the prefix).
 *
 * The secret is made by the caller (an app, from a cryptographic random source): 32..128 characters of
 * base62 / base64url (A-Z a-z 0-9 '-' '_'). The token is shown to the admin once, when the key is issued;
 * the service never stores it. Only its SHA-256 digest in lowercase hex, computed by the caller, is kept
 * (in ApiKeyIssued and the key view), together with the first 12 characters for display (`sl_live_ab12`).
 * A request's token is hashed the same way and looked up by that digest.
 */

export const API_KEY_TAG = 'sl';
export const API_KEY_SECRET_MIN_LENGTH = 32;
export const API_KEY_SECRET_MAX_LENGTH = 128;
/** How many leading characters of a token are kept and shown: the tag, the mode and four secret characters. */
export const API_KEY_DISPLAY_PREFIX_LENGTH = 12;

const SECRET = /^[A-Za-z0-9_-]+$/;
const TOKEN = /^sl_(test|live)_([A-Za-z0-9_-]+)$/;
const DISPLAY_PREFIX = /^sl_(test|live)_[A-Za-z0-9_-]{4}$/;

function isSecret(secret: string): boolean {
  return (
    typeof secret === 'string' &&
    secret.length >= API_KEY_SECRET_MIN_LENGTH &&
    secret.length <= API_KEY_SECRET_MAX_LENGTH &&
    SECRET.test(secret)
  );
}

/** The token for a caller-made secret. Throws DomainError 'InvalidApiKeySecret' when the secret is malformed. */
export function formatApiKey(mode: ApiKeyMode, secret: string): string {
  if (mode !== 'test' && mode !== 'live') {
    throw new DomainError('InvalidApiKeyMode', `API key mode must be test or live, not ${JSON.stringify(mode)}`);
  }
  if (!isSecret(secret)) {
    throw new DomainError(
      'InvalidApiKeySecret',
      `an API key secret is ${API_KEY_SECRET_MIN_LENGTH}..${API_KEY_SECRET_MAX_LENGTH} characters of A-Z a-z 0-9 - _`,
    );
  }
  return `${API_KEY_TAG}_${mode}_${secret}`;
}

/** Splits a token into mode and secret; null for anything not exactly `sl_(test|live)_<secret>`. */
export function parseApiKey(token: string): { mode: ApiKeyMode; secret: string } | null {
  if (typeof token !== 'string') return null;
  const match = TOKEN.exec(token);
  if (!match) return null;
  const [, mode, secret] = match;
  if ((mode !== 'test' && mode !== 'live') || secret === undefined || !isSecret(secret)) return null;
  return { mode, secret };
}

/** The first 12 characters of a token (`sl_live_ab12`), kept to tell keys apart in listings. */
export function keyPrefixForDisplay(token: string): string {
  return token.slice(0, API_KEY_DISPLAY_PREFIX_LENGTH);
}

/** Whether a stored display prefix is well formed and, when a mode is given, of that mode. */
export function isKeyPrefix(prefix: string, mode?: ApiKeyMode): boolean {
  const match = typeof prefix === 'string' ? DISPLAY_PREFIX.exec(prefix) : null;
  return match !== null && (mode === undefined || match[1] === mode);
}

/** What the API reads from the key view (looked up by the token's SHA-256 digest) to authorize a request. */
export interface ApiKeyRecord {
  keyId: string;
  organizationId: string;
  name: string;
  mode: ApiKeyMode;
  scopes: Scope[];
  revoked: boolean;
}

/** A route needs one scope, or `'any'` active key (`/v1/me`). */
export type RequiredScope = Scope | 'any';

export type Authorization = { ok: true; key: ApiKeyRecord } | { ok: false; error: DomainError };

/**
 * Whether a key may call a route. No key (unknown digest) or a revoked key → 'InvalidApiToken';
 * an active key without the scope → 'InsufficientScope'.
 */
export function authorize(key: ApiKeyRecord | null | undefined, required: RequiredScope): Authorization {
  if (!key || key.revoked) {
    return { ok: false, error: new DomainError('InvalidApiToken', 'the API token is not a valid, active key') };
  }
  if (required !== 'any' && !key.scopes.includes(required)) {
    return {
      ok: false,
      // details.scope fills the catalogue's 'lacks the scope {scope}' template (errors.ts).
      error: new DomainError('InsufficientScope', `this API key lacks the scope ${required}`, {
        scope: required,
        scopes: [...key.scopes],
      }),
    };
  }
  return { ok: true, key };
}

/** The key view's record for a key event; both events carry the whole key (see organization.ts). */
export function apiKeyRecordFromEvent(event: ApiKeyIssued | ApiKeyRevoked): ApiKeyRecord {
  return {
    keyId: event.data.keyId,
    organizationId: event.metadata.organizationId,
    name: event.data.name,
    mode: event.data.mode,
    scopes: [...event.data.scopes],
    revoked: event.type === 'ApiKeyRevoked',
  };
}
