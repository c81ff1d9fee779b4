import { Type, type TSchema } from 'typebox';
import { ErrorBody } from './errorBody';
import { RETRY_AFTER_SECONDS } from './errors';

/** The error statuses a route can answer, each documented with the error body in the OpenAPI document. */
export type ErrorStatus = 401 | 403 | 404 | 409 | 413 | 415 | 422 | 503;

const DEFAULT_DESCRIPTIONS: Record<ErrorStatus, string> = {
  401: 'ErrorCode 10: the key is missing, unknown, malformed or revoked',
  403: 'ErrorCode 12: the key lacks the scope this route needs',
  404: 'ErrorCode 701: no such message in this organization',
  409: 'ErrorCode 1300: this Idempotency-Key was already used with a different request',
  413: 'ErrorCode 300: the request (or a message in it) is larger than allowed',
  415: "ErrorCode 409: the body is not JSON (send 'Content-Type: application/json')",
  422: 'ErrorCode 300: the request is invalid',
  503: 'ErrorCode 503: a service this route needs (Kafka, Redis, the schema registry or ClickHouse) is out of reach; retry after Retry-After seconds (a send with the same Idempotency-Key)',
};

/**
 * The `response` entries of a route's schema for the error statuses it can answer, each with its description
 * (`descriptions` overrides the default one, e.g. to list a route's 422 ErrorCodes); 503 documents `Retry-After`.
 */
export function errorResponses(
  statuses: readonly ErrorStatus[],
  descriptions: Partial<Record<ErrorStatus, string>> = {},
): Record<number, TSchema> {
  return Object.fromEntries(
    statuses.map((status) => {
      const description = descriptions[status] ?? DEFAULT_DESCRIPTIONS[status];
      const schema =
        status === 503
          ? Type.Object(ErrorBody.properties, {
              description,
              // @fastify/swagger turns `headers` of a response schema into the response's documented headers.
              headers: {
                'Retry-After': Type.Integer({
                  description: `Seconds to wait before retrying (${RETRY_AFTER_SECONDS})`,
                  minimum: 1,
                }),
              },
            })
          : Type.Object(ErrorBody.properties, { description });
      return [status, schema];
    }),
  );
}

/**
 * A schema keyword that validation ignores and the OpenAPI document merges into the schema: for constraints the
 * route checks itself with a more precise answer than a schema error (a message stream other than `outbound` is
 * ErrorCode 1235, after the key is checked; a batch of more than 500 is ErrorCode 410), so the document says which
 * values are accepted without changing what the API answers.
 */
export const DOCUMENTED = 'x-documented';

/** `schema`, documented with `constraints` (e.g. `{ enum: ['outbound'] }`) that the route enforces itself. */
export function documented<T extends TSchema>(schema: T, constraints: Record<string, unknown>): T {
  return { ...schema, [DOCUMENTED]: constraints };
}

/** `schema`, documented as taking only `values`. */
export function documentedEnum<T extends TSchema>(schema: T, values: readonly string[]): T {
  return documented(schema, { enum: [...values] });
}

/** A copy of a route's schema for the document, with every documented constraint merged in. */
export function documentSchema<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((item: unknown) => documentSchema(item)) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string | symbol, unknown> = { ...(schema as Record<string | symbol, unknown>) };
  const constraints = copy[DOCUMENTED] as Record<string, unknown> | undefined;
  delete copy[DOCUMENTED];
  for (const key of Object.keys(copy)) copy[key] = documentSchema(copy[key]);
  return { ...copy, ...constraints } as T;
}
