import { Type } from 'typebox';
import type { Api, ConsoleServices } from '../context';
import { memberAllowedTo, memberOf } from './session';

/**
 * The Domains page: the organization's sending domains with the records to publish, through the account use cases
 * (AccountsService, as `admin domain …`). Every role reads; an admin adds, verifies (the domain, its return path)
 * and removes.
 */
export function domainsPage(services: ConsoleServices) {
  const { accounts } = services;
  const DomainName = Type.Object({ name: Type.String({ maxLength: 253 }) });
  return async function (api: Api): Promise<void> {
    api.get('/domains', async (request) => ({
      domains: await accounts.listDomains(memberOf(request).organization.id),
    }));

    api.post('/domains', { schema: { body: DomainName } }, async (request) => {
      const member = memberAllowedTo(request, 'manageDomains', 'add domains');
      return accounts.as(member.email).addDomain(member.organization.id, request.body.name);
    });

    api.post('/domains/:name/verify', { schema: { params: DomainName } }, async (request) => {
      const member = memberAllowedTo(request, 'manageDomains', 'verify domains');
      return accounts.as(member.email).verifyDomain(member.organization.id, request.params.name);
    });

    api.post('/domains/:name/return-path/verify', { schema: { params: DomainName } }, async (request) => {
      const member = memberAllowedTo(request, 'manageDomains', 'verify return paths');
      return accounts.as(member.email).verifyReturnPath(member.organization.id, request.params.name);
    });

    api.delete('/domains/:name', { schema: { params: DomainName } }, async (request, reply) => {
      const member = memberAllowedTo(request, 'manageDomains', 'remove domains');
      await accounts.as(member.email).removeDomain(member.organization.id, request.params.name);
      return reply.code(204).send();
    });
  };
}
