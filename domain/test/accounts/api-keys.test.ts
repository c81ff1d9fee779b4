import { describe, expect, it } from 'vitest';
import {
  apiKeyRecordFromEvent,
  authorize,
  formatApiKey,
  isKeyPrefix,
  keyPrefixForDisplay,
  parseApiKey,
} from '../../src/accounts';
import type { ApiKeyRecord } from '../../src/accounts';
import { DomainError } from '../../src/domainError';
import { KEY_ID, ORG, apiKeyData, apiKeyIssued, apiKeyRevoked } from './fixtures';

const SECRET = 'Ab12cD34eF56gH78iJ90kL12mN34oP56'; // 32 characters, base62
const SECRET_B64URL = 'q-9_ZxYwVuTsRqPoNmLkJiHgFeDcBa98-_76';

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof DomainError ? error.code : `not a DomainError: ${String(error)}`;
  }
  return undefined;
}

describe('API key tokens', () => {
  it('formats a live key as sl_live_<secret>', () => {
    expect(formatApiKey('live', SECRET)).toBe(`sl_live_${SECRET}`);
  });

  it('formats a test key as sl_test_<secret>', () => {
    expect(formatApiKey('test', SECRET)).toBe(`sl_test_${SECRET}`);
  });

  it.each([
    ['live', SECRET],
    ['test', SECRET_B64URL],
    ['live', 'x'.repeat(128)],
  ] as const)('parses back what it formats (%s)', (mode, secret) => {
    expect(parseApiKey(formatApiKey(mode, secret))).toEqual({ mode, secret });
  });

  it.each([
    ['shorter than 32 characters', SECRET.slice(1)],
    ['longer than 128 characters', 'x'.repeat(129)],
    ['with a character outside base62/base64url', `${SECRET.slice(1)}+`],
    ['empty', ''],
  ])('refuses to format a secret %s', (_why, secret) => {
    expect(codeOf(() => formatApiKey('live', secret))).toBe('InvalidApiKeySecret');
  });

  it.each([
    ['another tag', `pm_live_${SECRET}`],
    ['an unknown mode', `sl_prod_${SECRET}`],
    ['an upper-case tag', `SL_live_${SECRET}`],
    ['a missing separator', `sl_live${SECRET}`],
    ['a short secret', `sl_live_${SECRET.slice(1)}`],
    ['a long secret', `sl_live_${'x'.repeat(129)}`],
    ['a "+" in the secret', `sl_live_${SECRET.slice(1)}+`],
    ['a "=" padding', `sl_live_${SECRET}=`],
    ['a trailing newline', `sl_live_${SECRET}\n`],
    ['a leading space', ` sl_live_${SECRET}`],
    ['a Bearer prefix still on it', `Bearer sl_live_${SECRET}`],
    ['nothing', ''],
  ])('rejects a token with %s', (_why, token) => {
    expect(parseApiKey(token)).toBeNull();
  });

  it('shows the first 12 characters of a token: tag, mode and four characters of the secret', () => {
    expect(keyPrefixForDisplay(formatApiKey('live', SECRET))).toBe('sl_live_Ab12');
  });

  it('accepts a display prefix of the right mode', () => {
    expect(isKeyPrefix(keyPrefixForDisplay(formatApiKey('test', SECRET)), 'test')).toBe(true);
  });

  it('rejects a display prefix of the other mode', () => {
    expect(isKeyPrefix('sl_live_Ab12', 'test')).toBe(false);
  });
});

describe('authorizing a key for a route', () => {
  const key: ApiKeyRecord = {
    keyId: KEY_ID,
    organizationId: ORG,
    name: 'production sender',
    mode: 'live',
    scopes: ['email:send'],
    revoked: false,
  };

  it('lets an active key with the scope through', () => {
    expect(authorize(key, 'email:send')).toEqual({ ok: true, key });
  });

  it('refuses an active key without the scope: InsufficientScope', () => {
    const result = authorize(key, 'email:read');
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.code).toBe('InsufficientScope');
    expect(!result.ok && result.error.details).toEqual({ scope: 'email:read', scopes: ['email:send'] });
  });

  it("lets any active key call a route that needs 'any' (/v1/me)", () => {
    expect(authorize({ ...key, scopes: ['members:read'] }, 'any')).toEqual({
      ok: true,
      key: { ...key, scopes: ['members:read'] },
    });
  });

  it('refuses a revoked key, even where any key will do: InvalidApiToken', () => {
    const result = authorize({ ...key, revoked: true }, 'any');
    expect(!result.ok && result.error.code).toBe('InvalidApiToken');
  });

  it('refuses an unknown key (no record for the token hash): InvalidApiToken', () => {
    const result = authorize(null, 'email:send');
    expect(!result.ok && result.error.code).toBe('InvalidApiToken');
  });

  it('builds the view record of an issued key as active', () => {
    expect(apiKeyRecordFromEvent(apiKeyIssued())).toEqual({
      keyId: KEY_ID,
      organizationId: ORG,
      name: apiKeyData.name,
      mode: 'live',
      scopes: ['email:send', 'email:read'],
      revoked: false,
    });
  });

  it('builds the view record of a revoked key as revoked', () => {
    expect(apiKeyRecordFromEvent(apiKeyRevoked()).revoked).toBe(true);
  });
});
