import { createHash } from 'node:crypto';
import { MAX_BATCH_MESSAGES, validateBatchSize } from '@sendline/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { requireKey } from '../auth';
import { BATCH_BODY_LIMIT, SINGLE_BODY_LIMIT, type Api, type ApiDependencies } from '../context';
import { ApiError } from '../errors';
import { documented, documentedEnum, errorResponses } from '../openapi';
import { PostmarkSendAnswers, SendResult, type IdempotentRequest } from '../sending';

const Address = Type.Union([Type.String(), Type.Array(Type.String())], {
  description:
    'One address or a comma-separated list ("Name <a@x.com>, b@y.com"); an array of such strings is accepted too',
});

/**
 * An optional field that may also be null, taken as absent (as Postmark does, and as the domain's validation does):
 * postmarker, the most used Python client, sends every field it knows, null where the caller gave none.
 */
const Optional = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

/** Postmark's send request. Types are checked here; every rule (addresses, sizes, headers) by the domain. */
export const SendRequest = Type.Object(
  {
    From: Type.String(),
    To: Address,
    Cc: Optional(Address),
    Bcc: Optional(Address),
    Subject: Optional(Type.String()),
    Tag: Optional(Type.String()),
    HtmlBody: Optional(Type.String()),
    TextBody: Optional(Type.String()),
    ReplyTo: Optional(Address),
    Headers: Optional(Type.Array(Type.Object({ Name: Type.String(), Value: Type.String() }))),
    Metadata: Optional(
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), {
        description: 'String values; a number or boolean is kept as its text ("42"), a null value is absent',
      }),
    ),
    Attachments: Optional(
      Type.Array(
        Type.Object({
          Name: Type.String(),
          Content: Type.String({ description: 'base64' }),
          ContentType: Type.String(),
          ContentID: Optional(Type.String()),
        }),
      ),
    ),
    TrackOpens: Optional(Type.Boolean({ description: 'Accepted and ignored' })),
    TrackLinks: Optional(Type.Union(['None', 'HtmlAndText', 'HtmlOnly', 'TextOnly'].map((v) => Type.Literal(v)))),
    MessageStream: Optional(documentedEnum(Type.String({ description: 'ErrorCode 1235 for another' }), ['outbound'])),
  },
  { additionalProperties: true },
);

/** What a refused send's 422 can carry (Postmark's codes). */
const SEND_REFUSED =
  'ErrorCode 300: invalid request; 400: From not on a domain of the organization; 401: From’s domain not verified; ' +
  '402: malformed JSON; 403: a field of the wrong JSON type; 405: monthly allowance used up; 406: every recipient ' +
  'suppressed; 411: forbidden attachment type; 1235: a message stream other than outbound';
const BATCH_REFUSED =
  `ErrorCode 300: the body is not an array; 402: malformed JSON; 410: more than ${MAX_BATCH_MESSAGES} messages ` +
  '(each message’s own refusal is in its result)';

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'Beyond Postmark: the same key and body within 24 hours returns the first answer again',
    }),
  ),
});

/**
 * Runs `work` under the request's Idempotency-Key, if any: the same key with the same body gives the
 * stored answer again (`Idempotent-Replayed: true`); with another body, 409. A key whose earlier request
 * left no answer (it died, answered 503, or is still running) runs again with the first request's time
 * and lands on the same MessageIDs, so a retry after any fault sends at most once. Answers of 5xx are
 * not stored: the retry runs.
 */
export async function idempotent(
  deps: ApiDependencies,
  request: FastifyRequest,
  reply: FastifyReply,
  work: (idempotency: IdempotentRequest | undefined) => Promise<{ status: number; body: unknown }>,
) {
  const key = requireKey(request);
  const idempotencyKey = request.headers['idempotency-key'];
  if (typeof idempotencyKey !== 'string' || key.mode === 'test') {
    const answer = await work(undefined);
    return reply.code(answer.status).send(answer.body);
  }
  const requestHash = createHash('sha256')
    .update(`${request.routeOptions.url}\n${JSON.stringify(request.body)}`)
    .digest('hex');
  const claim = await deps.idempotency.claim(key.organizationId, idempotencyKey, requestHash, deps.now());
  if (claim.kind === 'conflict') throw new ApiError('IdempotencyKeyReused');
  if (claim.kind === 'replay') {
    reply.header('Idempotent-Replayed', 'true');
    return reply.code(claim.answer.status).send(claim.answer.body);
  }
  const submittedAt = claim.submittedAt;
  const answer = await work({ key: idempotencyKey, requestHash, submittedAt });
  if (answer.status < 500) {
    // The answer store is a cache: failing to fill it must not turn an accepted send into an error (a retry
    // would run again and land on the same MessageIDs).
    await deps.idempotency
      .complete(key.organizationId, idempotencyKey, requestHash, submittedAt, answer)
      .catch((error: unknown) => request.log.warn({ err: error }, 'the idempotency answer could not be stored'));
  }
  return reply.code(answer.status).send(answer.body);
}

export function emailRoutes(deps: ApiDependencies) {
  const sending = new PostmarkSendAnswers(deps);
  return async function (app: Api): Promise<void> {
    app.post(
      '/email',
      {
        bodyLimit: SINGLE_BODY_LIMIT,
        config: { scope: 'email:send' },
        schema: {
          tags: ['sending'],
          summary: 'Send one message (Postmark’s POST /email)',
          headers: IdempotencyHeaders,
          body: SendRequest,
          response: { 200: SendResult, ...errorResponses([401, 403, 409, 413, 415, 422, 503], { 422: SEND_REFUSED }) },
        },
      },
      (request, reply) =>
        idempotent(deps, request, reply, (idempotency) => sending.send(requireKey(request), request.body, idempotency)),
    );

    app.post(
      '/email/batch',
      {
        bodyLimit: BATCH_BODY_LIMIT,
        config: { scope: 'email:send' },
        schema: {
          tags: ['sending'],
          summary: `Send up to ${MAX_BATCH_MESSAGES} messages; one result per message, in order`,
          headers: IdempotencyHeaders,
          // Entries are checked one by one, so one malformed message never fails the others.
          body: documented(Type.Array(Type.Unknown()), { maxItems: MAX_BATCH_MESSAGES }),
          response: {
            200: Type.Array(SendResult),
            ...errorResponses([401, 403, 409, 413, 415, 422, 503], { 422: BATCH_REFUSED }),
          },
        },
      },
      (request, reply) =>
        idempotent(deps, request, reply, async (idempotency) => {
          const size = validateBatchSize(request.body.length);
          if (!size.ok) throw new ApiError(size.error.code, { detail: size.error.message });
          const outcomes = await sending.sendMany(requireKey(request), request.body, idempotency);
          return { status: 200, body: outcomes.map((outcome) => outcome.body) };
        }),
    );
  };
}
