import { authorize, parseApiKey, type RequiredScope } from '@sendline/domain';
import { hashApiKey, type AccountsView, type KeyUsage, type StoredApiKey } from '@sendline/infra';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './errors';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: StoredApiKey | null;
  }
  interface FastifyContextConfig {
    /** The scope a route needs; `'any'` for any active key; absent for public routes. */
    scope?: RequiredScope;
  }
}

/** The key of a request: `Authorization: Bearer <key>`, or Postmark's `X-Postmark-Server-Token`. */
export function tokenOf(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  const serverToken = request.headers['x-postmark-server-token'];
  if (typeof serverToken === 'string' && serverToken.trim() !== '') return serverToken.trim();
  return undefined;
}

/**
 * Authenticates the request's key against the key view (one Redis round trip by
 * the key's SHA-256) and checks the route's scope: 401 with ErrorCode 10 for a
 * missing, unknown or revoked key, 403 for a key without the scope. A key that passes is noted in `usage`.
 */
export function authenticate(accounts: AccountsView, usage?: KeyUsage) {
  return async function authenticateRequest(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const scope = request.routeOptions.config.scope;
    if (!scope) return;
    const token = tokenOf(request);
    const record = token && parseApiKey(token) ? await accounts.apiKeyByHash(hashApiKey(token)) : null;
    const decision = authorize(record, scope);
    if (!decision.ok) {
      throw new ApiError(decision.error.code, { scope: typeof scope === 'string' ? scope : '' });
    }
    request.apiKey = record;
    // The console's "last used": at most one write a minute per key, never waited for.
    if (record) usage?.touch(record.organizationId, record.keyId);
  };
}

export function requireKey(request: FastifyRequest): StoredApiKey {
  if (!request.apiKey) throw new ApiError('InvalidApiToken');
  return request.apiKey;
}
