import { Type } from 'typebox';
import type { Api, ApiDependencies } from '../context';
import { DetailsResponse, ListQuery, ListResponse, listOutbound, outboundDetails } from '../routes/activity';
import { memberOf } from './session';

/**
 * The Activity page: the public API's message search and message details (same filters, validation, errors and
 * answers: routes/activity.ts), for the signed-in member's organization. Every role reads it.
 */
export function activityPage(deps: ApiDependencies) {
  return async function (api: Api): Promise<void> {
    api.get('/messages', { schema: { querystring: ListQuery, response: { 200: ListResponse } } }, async (request) =>
      listOutbound(deps, memberOf(request).organization.id, request.query),
    );
    api.get(
      '/messages/:messageId',
      { schema: { params: Type.Object({ messageId: Type.String() }), response: { 200: DetailsResponse } } },
      async (request) => outboundDetails(deps, memberOf(request).organization.id, request.params.messageId),
    );
  };
}
