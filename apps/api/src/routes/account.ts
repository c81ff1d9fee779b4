import { domainSummary } from '@sendline/application';
import { Type } from 'typebox';
import { requireKey } from '../auth';
import type { Api, ApiDependencies } from '../context';
import { errorResponses } from '../openapi';

const Iso = Type.String({ description: 'ISO 8601 timestamp, UTC, with milliseconds' });
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const MeResponse = Type.Object({
  organization: Type.Object({ id: Type.String(), name: Type.String() }),
  key: Type.Object({
    id: Type.String(),
    name: Type.String(),
    mode: Type.Union([Type.Literal('test'), Type.Literal('live')]),
    scopes: Type.Array(Type.String()),
    prefix: Type.String({ description: 'The first characters of the key, to recognise it; never the secret' }),
  }),
});

const DnsRecord = Type.Object({
  type: Type.String(),
  name: Type.String(),
  value: Type.String(),
  priority: Type.Optional(Type.Integer()),
  purpose: Type.String(),
  state: Type.String({
    description:
      'ownership: verified or pending; mx and spf (the return path): verified or pending; dkim and dmarc: not_checked',
  }),
});

const RecordToRemove = Type.Object({
  type: Type.String(),
  name: Type.String(),
  value: Type.String(),
  priority: Type.Optional(Type.Integer()),
  purpose: Type.String(),
});

const DomainsResponse = Type.Object({
  domains: Type.Array(
    Type.Object({
      name: Type.String(),
      verified: Type.Boolean(),
      verifiedAt: Type.Union([Iso, Type.Null()]),
      addedAt: Iso,
      returnPath: Type.Union(
        [
          Type.Object({ host: Type.String(), verified: Type.Boolean(), verifiedAt: Type.Union([Iso, Type.Null()]) }),
          Type.Null(),
        ],
        {
          description:
            'The envelope sender’s domain of the domain’s mail once verified (until then the service’s own); null for a domain added before return paths, not assigned one yet',
        },
      ),
      dnsRecords: Type.Array(DnsRecord),
      dnsRecordsToRemove: Type.Array(RecordToRemove, {
        description: 'Records earlier instructions asked for that should go: the MX on the domain itself',
      }),
    }),
  ),
});

const MembersResponse = Type.Object({
  members: Type.Array(Type.Object({ email: Type.String(), role: Type.String(), addedAt: Iso })),
});

/** The account endpoints, in the service's own camelCase format (not Postmark's). */
export function accountRoutes(deps: ApiDependencies) {
  return async function (app: Api): Promise<void> {
    app.get(
      '/me',
      {
        config: { scope: 'any' },
        schema: {
          tags: ['account'],
          summary: 'The organization and the calling key',
          response: { 200: MeResponse, ...errorResponses([401, 503]) },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const organization = await deps.accounts.organization(key.organizationId);
        return {
          organization: { id: key.organizationId, name: organization?.name ?? '' },
          key: { id: key.keyId, name: key.name, mode: key.mode, scopes: key.scopes, prefix: key.prefix },
        };
      },
    );

    app.get(
      '/domains',
      {
        config: { scope: 'domains:read' },
        schema: {
          tags: ['account'],
          summary: 'The organization’s sending domains and their DNS records',
          response: { 200: DomainsResponse, ...errorResponses([401, 403, 503]) },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const domains = await deps.accounts.domains(key.organizationId);
        const names = { mailHost: deps.mailHost, spfDomain: deps.spfDomain ?? deps.mailHost };
        return {
          domains: [...domains].map(([name, domain]) => {
            const summary = domainSummary(name, domain, names);
            const returnPath = summary.returnPath;
            const stateOf = (purpose: string) => {
              if (purpose === 'ownership') return domain.verified ? 'verified' : 'pending';
              if (purpose === 'mx' || purpose === 'spf') return returnPath?.verified ? 'verified' : 'pending';
              return 'not_checked';
            };
            return {
              name,
              verified: domain.verified,
              verifiedAt: iso(domain.verifiedAt),
              addedAt: new Date(domain.addedAt).toISOString(),
              returnPath: returnPath && { ...returnPath, verifiedAt: iso(returnPath.verifiedAt) },
              dnsRecords: summary.dnsRecords.map((record) => ({ ...record, state: stateOf(record.purpose) })),
              dnsRecordsToRemove: summary.dnsRecordsToRemove,
            };
          }),
        };
      },
    );

    app.get(
      '/members',
      {
        config: { scope: 'members:read' },
        schema: {
          tags: ['account'],
          summary: 'The organization’s members',
          response: { 200: MembersResponse, ...errorResponses([401, 403, 503]) },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const members = await deps.accounts.members(key.organizationId);
        return {
          members: [...members].map(([email, member]) => ({
            email,
            role: member.role,
            addedAt: new Date(member.addedAt).toISOString(),
          })),
        };
      },
    );
  };
}
