import { Type } from 'typebox';
import type { Api, ApiDependencies, ConsoleServices } from '../context';
import { dateFilter } from '../routes/activity';
import {
  deleteSuppressions,
  DeleteResponse,
  DumpResponse,
  dumpSuppressions,
  suppressionDeletions,
} from '../routes/suppressions';
import { memberAllowedTo, memberOf } from './session';

/**
 * The Suppressions page: the public API's dump and delete (routes/suppressions.ts: same answers, same rules) and the
 * admin line's manual suppression (ManualSuppressions, origin Customer). Every role reads; admins and developers
 * add and remove.
 */
export function suppressionsPage(deps: ApiDependencies, services: ConsoleServices) {
  const deletions = suppressionDeletions(deps);
  return async function (api: Api): Promise<void> {
    api.get(
      '/suppressions',
      {
        schema: {
          querystring: Type.Object({
            email: Type.Optional(Type.String()),
            origin: Type.Optional(Type.String()),
            fromdate: Type.Optional(Type.String()),
            todate: Type.Optional(Type.String()),
          }),
          response: { 200: DumpResponse },
        },
      },
      async (request) => {
        const { email, origin, fromdate, todate } = request.query;
        const from = dateFilter('fromdate', fromdate, false);
        const to = dateFilter('todate', todate, true);
        const { Suppressions } = await dumpSuppressions(deps, memberOf(request).organization.id);
        const needle = email?.trim().toLowerCase();
        return {
          Suppressions: Suppressions.filter((entry) => {
            const at = Date.parse(entry.CreatedAt);
            return (
              (!needle || entry.EmailAddress.toLowerCase().includes(needle)) &&
              (!origin || entry.Origin === origin) &&
              (from === undefined || at >= from) &&
              (to === undefined || at <= to)
            );
          }),
        };
      },
    );

    api.post(
      '/suppressions',
      {
        schema: {
          body: Type.Object({ EmailAddress: Type.String({ maxLength: 320 }) }),
          response: { 200: DeleteResponse },
        },
      },
      async (request) => {
        const member = memberAllowedTo(request, 'manageSuppressions', 'add suppressions');
        const result = await services.suppressions.add(member.organization.id, request.body.EmailAddress, 'Customer');
        return {
          Suppressions: [
            {
              EmailAddress: result.emailAddress,
              Status: result.added ? 'Suppressed' : 'AlreadySuppressed',
              Message: result.added ? null : `Already suppressed (${result.reason}).`,
            },
          ],
        };
      },
    );

    api.delete(
      '/suppressions/:email',
      {
        schema: { params: Type.Object({ email: Type.String({ maxLength: 320 }) }), response: { 200: DeleteResponse } },
      },
      async (request) => {
        const member = memberAllowedTo(request, 'manageSuppressions', 'remove suppressions');
        return deleteSuppressions(deletions, member.organization.id, [{ EmailAddress: request.params.email }]);
      },
    );
  };
}
