import { SuppressionDeletions, type SuppressionDeletion } from '@sendline/application';
import { Type, type Static } from 'typebox';
import { requireKey } from '../auth';
import type { Api, ApiDependencies } from '../context';
import { assertOutboundStream } from '../messageStream';
import { documentedEnum, errorResponses } from '../openapi';

/** Any stream name reaches the route, which answers ErrorCode 1235 for one other than `outbound`. */
const StreamParams = Type.Object({ stream: documentedEnum(Type.String(), ['outbound']) });

export const DumpResponse = Type.Object({
  Suppressions: Type.Array(
    Type.Object({
      EmailAddress: Type.String(),
      SuppressionReason: Type.String(),
      Origin: Type.String(),
      CreatedAt: Type.String(),
    }),
  ),
});

const DeleteRequest = Type.Object(
  {
    Suppressions: Type.Array(
      Type.Unknown({ description: "{ EmailAddress }; an entry without an 'EmailAddress' string is answered Failed" }),
    ),
  },
  { additionalProperties: true },
);

export const DeleteResponse = Type.Object({
  Suppressions: Type.Array(
    Type.Object({
      EmailAddress: Type.String(),
      Status: Type.String(),
      Message: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
});

/** The address an entry of a delete request names, if it is a string. */
function suppliedAddress(entry: unknown): unknown {
  return typeof entry === 'object' && entry !== null && 'EmailAddress' in entry ? entry.EmailAddress : undefined;
}

/** The suppression deletions of the API's routes (this delete, the console's remove, a bounce reactivated). */
export function suppressionDeletions(deps: Pick<ApiDependencies, 'store' | 'suppressions' | 'now' | 'newId'>) {
  return new SuppressionDeletions({
    store: deps.store,
    suppressions: deps.suppressions,
    now: () => deps.now(),
    newId: () => deps.newId(),
  });
}

/** Every suppressed address of an organization, in Postmark's dump shape (the API's dump and the console's list). */
export async function dumpSuppressions(
  deps: Pick<ApiDependencies, 'suppressions'>,
  organizationId: string,
): Promise<Static<typeof DumpResponse>> {
  const entries = await deps.suppressions.list(organizationId);
  return {
    Suppressions: entries.map((entry) => ({
      EmailAddress: entry.emailAddress,
      SuppressionReason: entry.reason,
      Origin: entry.origin,
      CreatedAt: new Date(entry.createdAt).toISOString(),
    })),
  };
}

type DeleteResult = Static<typeof DeleteResponse>['Suppressions'][number];

/** One address's deletion in Postmark's words. */
function deleteResult(supplied: unknown, deletion: SuppressionDeletion): DeleteResult {
  if (deletion.deleted) return { EmailAddress: String(supplied), Status: 'Deleted', Message: null };
  if (deletion.missingAddress) {
    return {
      EmailAddress: String(supplied ?? ''),
      Status: 'Failed',
      Message: "Each entry needs an 'EmailAddress' string.",
    };
  }
  return { EmailAddress: String(supplied), Status: 'Failed', Message: `Invalid email address: ${deletion.reason}.` };
}

/**
 * A Postmark delete request's entries through the use case (each address on its own, one append), answered in
 * Postmark's shape (the API's delete and the console's remove). A test key with this scope removes suppressions
 * too (spec rule 4).
 */
export async function deleteSuppressions(
  deletions: SuppressionDeletions,
  organizationId: string,
  list: unknown[],
): Promise<Static<typeof DeleteResponse>> {
  const supplied = list.map(suppliedAddress);
  const results = await deletions.delete(
    organizationId,
    supplied.map((address) => (typeof address === 'string' ? address : undefined)),
  );
  return { Suppressions: results.map((deletion, i) => deleteResult(supplied[i], deletion)) };
}

export function suppressionRoutes(deps: ApiDependencies) {
  const deletions = suppressionDeletions(deps);
  return async function (app: Api): Promise<void> {
    app.get(
      '/message-streams/:stream/suppressions/dump',
      {
        config: { scope: 'email:read' },
        schema: {
          tags: ['suppressions'],
          summary: 'Every suppressed address of the organization (no paging; unknown query parameters are ignored)',
          params: StreamParams,
          response: {
            200: DumpResponse,
            ...errorResponses([401, 403, 422, 503], { 422: 'ErrorCode 1235: a message stream other than outbound' }),
          },
        },
      },
      async (request) => {
        assertOutboundStream(request.params.stream);
        return dumpSuppressions(deps, requireKey(request).organizationId);
      },
    );

    app.post(
      '/message-streams/:stream/suppressions/delete',
      {
        config: { scope: 'email:send' },
        schema: {
          tags: ['suppressions'],
          summary: 'Remove addresses from the suppression list; each address is processed on its own',
          params: StreamParams,
          body: DeleteRequest,
          response: {
            200: DeleteResponse,
            ...errorResponses([401, 403, 413, 415, 422, 503], {
              422: "ErrorCode 300: no 'Suppressions' array; ErrorCode 402: malformed JSON; ErrorCode 1235: a message stream other than outbound",
            }),
          },
        },
      },
      async (request) => {
        assertOutboundStream(request.params.stream);
        return deleteSuppressions(deletions, requireKey(request).organizationId, request.body.Suppressions);
      },
    );
  };
}
