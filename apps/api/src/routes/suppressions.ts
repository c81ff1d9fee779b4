import { decideSuppression, initialSuppressionState, parseEmailAddress, type SuppressionEvent } from '@sendline/domain';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { ApiDependencies } from '../app';
import { requireKey } from '../auth';
import { ApiError } from '../errors';
import { documentedEnum, errorResponses } from '../openapi';

/** Any stream name reaches the route, which answers ErrorCode 1235 for one other than `outbound`. */
const StreamParams = Type.Object({ stream: documentedEnum(Type.String(), ['outbound']) });

const DumpResponse = Type.Object({
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

const DeleteResponse = Type.Object({
  Suppressions: Type.Array(
    Type.Object({
      EmailAddress: Type.String(),
      Status: Type.String(),
      Message: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
});

function onlyOutbound(stream: string): void {
  if (stream !== 'outbound') {
    throw new ApiError('InvalidMessageStream', {
      detail: `The message stream '${stream}' does not exist; the only stream is 'outbound'.`,
    });
  }
}

export function suppressionRoutes(deps: ApiDependencies) {
  return async function (app: FastifyInstance): Promise<void> {
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
        onlyOutbound((request.params as { stream: string }).stream);
        const key = requireKey(request);
        const entries = await deps.suppressions.list(key.organizationId);
        return {
          Suppressions: entries.map((entry) => ({
            EmailAddress: entry.emailAddress,
            SuppressionReason: entry.reason,
            Origin: entry.origin,
            CreatedAt: new Date(entry.createdAt).toISOString(),
          })),
        };
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
        onlyOutbound((request.params as { stream: string }).stream);
        const key = requireKey(request);
        const list = (request.body as { Suppressions?: unknown } | undefined)?.Suppressions;
        if (!Array.isArray(list)) {
          throw new ApiError('InvalidEmailRequest', {
            detail: "The request must hold a 'Suppressions' array of { EmailAddress } objects.",
          });
        }
        const now = deps.now();
        const results: { EmailAddress: string; Status: 'Deleted' | 'Failed'; Message: string | null }[] = [];
        const events: SuppressionEvent[] = [];
        for (const entry of list) {
          const supplied = (entry as { EmailAddress?: unknown } | null)?.EmailAddress;
          if (typeof supplied !== 'string') {
            results.push({
              EmailAddress: String(supplied ?? ''),
              Status: 'Failed',
              Message: "Each entry needs an 'EmailAddress' string.",
            });
            continue;
          }
          const parsed = parseEmailAddress(supplied);
          if (!parsed.ok) {
            results.push({
              EmailAddress: supplied,
              Status: 'Failed',
              Message: `Invalid email address: ${parsed.reason}.`,
            });
            continue;
          }
          // Deleted whether or not it was suppressed: the decider always records the deletion.
          events.push(
            ...decideSuppression(
              {
                type: 'DeleteSuppression',
                data: { emailAddress: parsed.value },
                metadata: { organizationId: key.organizationId, now, eventIds: [deps.newId()] },
              },
              initialSuppressionState(),
            ),
          );
          results.push({ EmailAddress: supplied, Status: 'Deleted', Message: null });
        }
        // Spec rule 4: a test key with this scope removes suppressions too.
        await deps.store.append(events);
        // Read your own write: the view forgets the address now; the projector's copy of this is a no-op.
        await deps.suppressions.apply(events);
        return { Suppressions: results };
      },
    );
  };
}
