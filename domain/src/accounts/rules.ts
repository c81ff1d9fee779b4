import { DomainError, type DomainErrorCode } from '../domainError';
import { parseEmailAddress } from '../validation';

/**
 * Value rules of the accounts domain: names, roles, scopes and modes.
 *
 * Commands reach the decider from untyped input (the admin command line, an HTTP body), so every
 * rule here checks at run time and answers with a DomainError whose code is stable.
 */

export const MEMBER_ROLES = ['admin', 'developer', 'viewer'] as const;
export type Role = (typeof MEMBER_ROLES)[number];

export const API_KEY_SCOPES = [
  'email:send',
  'email:read',
  'domains:read',
  'members:read',
  'webhooks:manage',
  'templates:read',
  'templates:manage',
] as const;
export type Scope = (typeof API_KEY_SCOPES)[number];

export const API_KEY_MODES = ['test', 'live'] as const;
export type ApiKeyMode = (typeof API_KEY_MODES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (MEMBER_ROLES as readonly string[]).includes(value);
}

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (API_KEY_SCOPES as readonly string[]).includes(value);
}

export function isApiKeyMode(value: unknown): value is ApiKeyMode {
  return typeof value === 'string' && (API_KEY_MODES as readonly string[]).includes(value);
}

const DOMAIN_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const ASCII_ONLY = /^[\x20-\x7e]*$/;

/**
 * A domain name as the service stores it: lowercased, at least two labels, each label 1..63 characters of
 * [a-z0-9-] neither starting nor ending with '-', at most 253 characters in all, no trailing dot.
 * Internationalized names are accepted only in their punycode form (`xn--…` labels).
 * Throws DomainError 'InvalidDomainName'.
 */
export function normalizeDomainName(input: string): string {
  const invalid = (why: string) =>
    new DomainError('InvalidDomainName', `invalid domain name ${JSON.stringify(input)}: ${why}`);
  if (typeof input !== 'string' || input.length === 0) throw invalid('it is empty');
  if (!ASCII_ONLY.test(input)) throw invalid('give an internationalized name in punycode (xn--…)');
  const name = input.toLowerCase();
  if (name.length > 253) throw invalid('longer than 253 characters');
  if (name.endsWith('.')) throw invalid('no trailing dot');
  const labels = name.split('.');
  if (labels.length < 2) throw invalid('it needs at least two labels');
  for (const label of labels) {
    if (!DOMAIN_LABEL.test(label)) {
      throw invalid(`label ${JSON.stringify(label)} must be 1..63 of a-z, 0-9, '-', not starting or ending with '-'`);
    }
  }
  return name;
}

export function isValidDomainName(input: string): boolean {
  try {
    normalizeDomainName(input);
    return true;
  } catch {
    return false;
  }
}

/**
 * A member's email address: one bare address held to the recipients' rules (`parseEmailAddress`, the one
 * address validator), in its canonical lowercase form. Throws DomainError 'InvalidEmail'.
 */
export function normalizeMemberEmail(input: string): string {
  const parsed = parseEmailAddress(input);
  if (!parsed.ok) throw new DomainError('InvalidEmail', `invalid email address ${JSON.stringify(input)}`);
  return parsed.value;
}

/**
 * A display name (organization, API key): surrounding whitespace dropped, then 1..max characters
 * (counted as code points), no control characters.
 */
export function normalizeDisplayName(input: string, max: number, code: DomainErrorCode, what: string): string {
  if (typeof input !== 'string') throw new DomainError(code, `${what} must be a string`);
  const name = input.trim();
  const length = [...name].length;
  // eslint-disable-next-line no-control-regex
  if (length < 1 || length > max || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new DomainError(code, `${what} must be 1..${max} characters without control characters`);
  }
  return name;
}

/** `["all"]` stands for every scope (`admin key create --scopes all`, the console's key form); other lists as given. */
export function expandScopes(scopes: readonly string[]): string[] {
  return scopes.length === 1 && scopes[0] === 'all' ? [...API_KEY_SCOPES] : [...scopes];
}

/** Scopes of a new API key: at least one, each known, none twice. */
export function validateScopes(scopes: readonly string[]): Scope[] {
  if (!Array.isArray(scopes) || scopes.length === 0) {
    throw new DomainError('NoScopes', `an API key needs at least one scope of ${API_KEY_SCOPES.join(', ')}`);
  }
  const seen = new Set<Scope>();
  for (const scope of scopes) {
    if (!isScope(scope)) {
      throw new DomainError(
        'UnknownScope',
        `unknown scope ${JSON.stringify(scope)}; known: ${API_KEY_SCOPES.join(', ')}`,
        {
          scope,
        },
      );
    }
    if (seen.has(scope)) throw new DomainError('DuplicateScope', `scope ${scope} is given twice`, { scope });
    seen.add(scope);
  }
  return [...seen];
}

/** A lowercase hexadecimal SHA-256 digest (64 characters). */
export function isSha256Hex(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);
}
