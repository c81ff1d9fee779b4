import { describeError, DomainError, type ErrorParams } from '@sendline/domain';
import { DEPENDENCY_NAMES, InfrastructureError, unavailableService } from '@sendline/infra';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';

/** An answer from the error catalogue: a stable code and the parameters of its message. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    readonly params: ErrorParams = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(code);
    this.name = 'ApiError';
  }
}

export interface PostmarkError {
  ErrorCode: number;
  Message: string;
}

/** The HTTP status and Postmark-style body for a catalogue code. */
export function errorAnswer(code: string, params: ErrorParams = {}): { status: number; body: PostmarkError } {
  const described = describeError(code, params);
  return { status: described.httpStatus, body: { ErrorCode: described.ErrorCode, Message: described.Message } };
}

export function sendError(reply: FastifyReply, code: string, params: ErrorParams = {}): FastifyReply {
  const { status, body } = errorAnswer(code, params);
  return reply.code(status).send(body);
}

/**
 * Seconds a client is asked to wait after a 503 (`Retry-After`): the API notices a service's return within about
 * a second (Redis reconnects every 500 ms at most, a Kafka append finds a broker on its next attempt).
 */
export const RETRY_AFTER_SECONDS = 2;

/**
 * A failure of a service a route needs (Redis, Kafka, the schema registry, ClickHouse) as its answer: 503, the
 * service named in the message, Retry-After. Undefined for any other failure.
 */
export function unavailableAnswer(
  error: unknown,
): { status: number; body: PostmarkError; headers: Record<string, string> } | undefined {
  const service = unavailableService(error);
  if (!service && !(error instanceof InfrastructureError)) return undefined;
  return {
    ...errorAnswer('ServiceUnavailable', { service: service ? DEPENDENCY_NAMES[service] : undefined }),
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  };
}

/** Fastify's own errors (parsing, limits, schema validation) as catalogue codes. */
function fromFastifyError(error: FastifyError): { code: string; params: ErrorParams } | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { code: 'JsonRequired', params: {} };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'PayloadTooLarge', params: { detail: `The request body is larger than this endpoint accepts.` } };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { code: 'InvalidJson', params: {} };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { code: 'InvalidJson', params: {} };
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message) && !error.validation)) {
    return { code: 'InvalidJson', params: {} };
  }
  if (error.validation) {
    const where = error.validationContext ?? 'body';
    const first = error.validation[0];
    const path = first?.instancePath ? first.instancePath.slice(1).replace(/\//g, '.') : '';
    const detail =
      `${where === 'body' ? '' : `${where} `}${path ? `'${path}' ` : ''}${first?.message ?? 'is invalid'}`.trim();
    return { code: 'InvalidEmailRequest', params: { detail: `Invalid request: ${detail}.` } };
  }
  return undefined;
}

/** One error handler: every failure leaves as a catalogue answer, never as a stack trace. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((failure: unknown, request, reply) => {
    const error = failure as FastifyError;
    if (failure instanceof ApiError) {
      for (const [name, value] of Object.entries(failure.headers)) reply.header(name, value);
      return sendError(reply, failure.code, failure.params);
    }
    if (failure instanceof DomainError) {
      return sendError(reply, failure.code, {
        ...(failure.details as ErrorParams | undefined),
        detail: failure.message,
      });
    }
    const mapped = fromFastifyError(error);
    if (mapped) return sendError(reply, mapped.code, mapped.params);
    const unavailable = unavailableAnswer(failure);
    if (unavailable) {
      request.log.error(
        { err: { code: (error as { code?: string }).code, message: error.message } },
        'infrastructure failure',
      );
      return reply.code(unavailable.status).headers(unavailable.headers).send(unavailable.body);
    }
    if (error.statusCode === 429) return sendError(reply, 'RateLimited');
    request.log.error({ err: { message: error.message, code: error.code, stack: error.stack } }, 'unexpected failure');
    return sendError(reply, 'InternalError');
  });
}

/** The answer to a path no route has (app.ts's not-found handler): 404, Postmark-style. */
export function notFoundAnswer(method: string, url: string): { status: number; body: PostmarkError } {
  return { status: 404, body: { ErrorCode: 404, Message: `No endpoint ${method} ${url.split('?')[0]}.` } };
}
