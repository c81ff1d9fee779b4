import { Type } from 'typebox';
import type { Api, ApiDependencies } from '../context';
import { Count, Offset } from '../routes/activity';
import { memberAllowedTo } from './session';

/**
 * The Audit page (admins): who changed what in the organization's account and when, newest first — the account
 * events as the audit view keeps them, projected from the never-compacted `accounts.history` (each with the actor
 * its command recorded: a console member's address, 'admin command line'; null for an event written before actors
 * were recorded).
 */
export function auditPage(deps: ApiDependencies) {
  return async function (api: Api): Promise<void> {
    api.get(
      '/audit',
      { schema: { querystring: Type.Object({ count: Type.Optional(Count), offset: Type.Optional(Offset) }) } },
      async (request) => {
        const member = memberAllowedTo(request, 'readAudit', 'read the audit');
        const count = request.query.count === undefined ? 50 : Number(request.query.count);
        const offset = request.query.offset === undefined ? 0 : Number(request.query.offset);
        const { total, entries } = await deps.accounts.audit(member.organization.id, count, offset);
        return { TotalCount: total, entries };
      },
    );
  };
}
