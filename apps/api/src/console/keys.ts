import { expandScopes, requireKeyIssuer } from '@sendline/domain';
import { Type } from 'typebox';
import type { Api, ApiDependencies, ConsoleServices } from '../context';
import { memberAllowedTo, memberOf } from './session';

/**
 * Developers > API keys: list (never a token; with when each key was last used), create (the token shown once),
 * revoke — the account use cases of `admin key …`. Who may issue which key is the domain's rule (requireKeyIssuer).
 */
export function keysPage(deps: ApiDependencies, services: ConsoleServices) {
  const { accounts } = services;
  return async function (api: Api): Promise<void> {
    api.get('/keys', async (request) => {
      const organizationId = memberOf(request).organization.id;
      const [keys, lastUsed] = await Promise.all([
        accounts.listApiKeys(organizationId),
        deps.keyUsage?.lastUsed(organizationId) ?? new Map<string, number>(),
      ]);
      return { keys: keys.map((key) => ({ ...key, lastUsedAt: lastUsed.get(key.id) ?? null })) };
    });

    api.post(
      '/keys',
      {
        schema: {
          body: Type.Object({
            name: Type.String({ maxLength: 100 }),
            mode: Type.String(),
            scopes: Type.Array(Type.String(), { maxItems: 20 }),
          }),
        },
      },
      async (request) => {
        const member = memberOf(request);
        const { name, mode } = request.body;
        const scopes = expandScopes(request.body.scopes);
        requireKeyIssuer(member.role, { mode, scopes });
        const issued = await accounts.as(member.email).issueApiKey(member.organization.id, { name, mode, scopes });
        return { ...issued, lastUsedAt: null };
      },
    );

    api.delete('/keys/:id', { schema: { params: Type.Object({ id: Type.String() }) } }, async (request) => {
      const member = memberAllowedTo(request, 'manageKeys', 'revoke API keys');
      const revoked = await accounts.as(member.email).revokeApiKey(member.organization.id, request.params.id);
      const lastUsed = await deps.keyUsage?.lastUsed(member.organization.id);
      return { ...revoked, lastUsedAt: lastUsed?.get(revoked.id) ?? null };
    });
  };
}
