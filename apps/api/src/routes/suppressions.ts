import { suppressionDecider, type SuppressionEvent } from '@sendline/domain';
import { CommandHandler } from '@sendline/infra';
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

/**
 * The suppression commands of the API (deleting an address here, reactivating a bounce's address in bounces.ts):
 * the suppression decider through the CommandHandler. The view forgets a deleted address as soon as its event is
 * appended: the caller reads its own write (the projector's copy of this is a no-op).
 */
export function suppressionCommands(deps: Pick<ApiDependencies, 'store' | 'suppressions'>) {
  return new CommandHandler({
    decider: suppressionDecider,
    store: deps.store,
    apply: (events: SuppressionEvent[]) => deps.suppressions.apply(events),
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

/**
 * Deletes addresses from an organization's suppressions, each on its own, in one append, answered in Postmark's
 * shape (the API's delete and the console's remove).
 */
export async function deleteSuppressions(
  deps: Pick<ApiDependencies, 'now' | 'newId'>,
  suppressions: ReturnType<typeof suppressionCommands>,
  organizationId: string,
  list: unknown[],
): Promise<Static<typeof DeleteResponse>> {
  const now = deps.now();
  const results: Static<typeof DeleteResponse>['Suppressions'] = [];
  const events: SuppressionEvent[] = [];
  for (const entry of list) {
    const supplied = suppliedAddress(entry);
    if (typeof supplied !== 'string') {
      results.push({
        EmailAddress: String(supplied ?? ''),
        Status: 'Failed',
        Message: "Each entry needs an 'EmailAddress' string.",
      });
      continue;
    }
    // Deleted whether or not it was suppressed: the decider always records the deletion.
    const decision = suppressions.decide({
      type: 'DeleteSuppression',
      data: { emailAddress: supplied },
      metadata: { organizationId, now, eventIds: [deps.newId()] },
    });
    if (!decision.ok) {
      results.push({
        EmailAddress: supplied,
        Status: 'Failed',
        Message: `Invalid email address: ${decision.error.message}.`,
      });
      continue;
    }
    events.push(...decision.events);
    results.push({ EmailAddress: supplied, Status: 'Deleted', Message: null });
  }
  // One append for the whole request, as one answer (spec rule 4: a test key with this scope removes
  // suppressions too).
  await suppressions.commit(events);
  return { Suppressions: results };
}

export function suppressionRoutes(deps: ApiDependencies) {
  const suppressions = suppressionCommands(deps);
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
        return deleteSuppressions(deps, suppressions, requireKey(request).organizationId, request.body.Suppressions);
      },
    );
  };
}
