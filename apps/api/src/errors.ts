import { DomainError, type DomainErrorCode } from '@sendline/domain';
import { DEPENDENCY_NAMES, InfrastructureError, unavailableService } from '@sendline/infra';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import type { PostmarkError } from './errorBody';

/**
 * The API's error catalogue: ONE table from stable string codes (every DomainErrorCode, and the API's own
 * request errors) to the Postmark-style `ErrorCode`, the HTTP status and the message. The domain names its
 * errors and knows nothing of HTTP; the error handler below turns a code into an answer with `describeError`
 * (fastify's lib/errors.js habit: stable code, template, status).
 *
 * Messages are templates: `{name}` is replaced by `params.name` (an array is joined with ", "). When a
 * parameter a template needs is missing, the entry's `genericMessage` is used instead, so an answer never
 * shows a raw placeholder.
 *
 * ErrorCode values are Postmark's where Postmark has the case (clients such as postmark.js 5.1.0 pick
 * their error class from them: 406 → InactiveRecipientsError, 300 → InvalidEmailRequestError, by HTTP
 * 401 / 422 / 429 / 500 / 503). Codes marked "ours" are this service's own.
 */

export interface ErrorCatalogueEntry {
  /** The integer sent as `ErrorCode`. */
  errorCode: number;
  httpStatus: number;
  /** Template with `{param}` placeholders. */
  message: string;
  /** The message when a parameter is missing (equal to `message` when it has no placeholder). */
  genericMessage: string;
}

const INACTIVE_RECIPIENTS =
  'You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: {addresses}. ' +
  'Inactive recipients are ones that have generated a hard bounce, a spam complaint, or a manual suppression.';
const INACTIVE_RECIPIENTS_GENERIC =
  'You tried to send to recipient(s) that have been marked as inactive. ' +
  'Inactive recipients are ones that have generated a hard bounce, a spam complaint, or a manual suppression.';

function entry(errorCode: number, httpStatus: number, message: string, genericMessage = message): ErrorCatalogueEntry {
  return { errorCode, httpStatus, message, genericMessage };
}

/** The one answer for a failure the caller cannot fix or cause: a broken invariant, a code no route should meet. */
const INTERNAL_ERROR = entry(500, 500, 'An internal error occurred.');

/**
 * Every code, the domain's (DomainErrorCode) and the API's own request errors, with its answer. A domain code
 * that no request should reach through a route (an account rule the console applies, a broken invariant) is
 * answered as InternalError, never with the rule's own words.
 */
export const ERROR_CATALOGUE = {
  Ok: entry(0, 200, 'OK'),
  InvalidApiToken: entry(10, 401, 'Request does not contain a valid Server token.'),
  /** Ours: the key is valid but lacks the route's scope. */
  InsufficientScope: entry(
    12,
    403,
    'This API key lacks the scope {scope}.',
    'This API key lacks the scope this request needs.',
  ),
  /** A send request broke a rule; `detail` is the validation message naming the field. */
  InvalidEmailRequest: entry(300, 422, '{detail}', 'Invalid email request.'),
  /** From is not on a domain of the organization. */
  SenderSignatureNotFound: entry(
    400,
    422,
    "The 'From' address you supplied ({from}) is not on a domain of this organization. Add and verify its domain first.",
    "The 'From' address you supplied is not on a domain of this organization. Add and verify its domain first.",
  ),
  /** From's domain belongs to the organization but is not verified yet. */
  SenderSignatureNotConfirmed: entry(
    401,
    422,
    "The domain of the 'From' address ({domain}) has not been verified yet.",
    "The domain of the 'From' address has not been verified yet.",
  ),
  InvalidJson: entry(402, 422, 'The request body is not valid JSON.'),
  IncompatibleJson: entry(
    403,
    422,
    '{detail}',
    'The JSON input you provided is syntactically correct, but still not the one we expect.',
  ),
  /** The organization's sending allowance is exhausted. */
  NotAllowedToSend: entry(
    405,
    422,
    'You are not allowed to send: the sending allowance of this organization is used up.',
  ),
  InactiveRecipients: entry(406, 422, INACTIVE_RECIPIENTS, INACTIVE_RECIPIENTS_GENERIC),
  /** The message decider's code when every recipient is suppressed; answered exactly as InactiveRecipients. */
  AllRecipientsSuppressed: entry(406, 422, INACTIVE_RECIPIENTS, INACTIVE_RECIPIENTS_GENERIC),
  JsonRequired: entry(409, 415, "JSON data required: send the body as JSON with 'Content-Type: application/json'."),
  TooManyBatchMessages: entry(410, 422, '{detail}', 'A batch may hold at most 500 messages.'),
  ForbiddenAttachmentType: entry(411, 422, '{detail}', 'An attachment has a forbidden file type.'),
  MessageNotFound: entry(701, 404, 'Message {messageId} was not found.', 'This message was not found.'),
  /** A bounce id the organization has no bounce of (or one past the 30 days kept). */
  BounceNotFound: entry(701, 404, 'Bounce {bounceId} was not found.', 'This bounce was not found.'),
  InvalidMessageStream: entry(
    1235,
    422,
    '{detail}',
    "The message stream does not exist; the only message stream is 'outbound'.",
  ),
  /** The request (or the message it describes) is larger than allowed. */
  PayloadTooLarge: entry(300, 413, '{detail}', 'The request is too large.'),
  /** Ours: the path exists but not with this method; answered with `Allow` listing the methods it has. */
  MethodNotAllowed: entry(
    1310,
    405,
    'The method {method} is not allowed on {path}; it allows {allowed}.',
    'This method is not allowed on this path.',
  ),
  /** Ours: an Idempotency-Key was used before with a different request. */
  IdempotencyKeyReused: entry(1300, 409, 'This Idempotency-Key was already used with a different request.'),
  RateLimited: entry(
    429,
    429,
    'Rate limit exceeded. Retry after {retryAfter} seconds.',
    'Rate limit exceeded. Retry later.',
  ),
  /**
   * Ours: a service a route needs (the event log, the view store, the schema registry, the activity store) cannot
   * be reached or did not answer in time; `service` names it. Answered with Retry-After. For a send it means the
   * outcome is unknown: retry with the same Idempotency-Key.
   */
  ServiceUnavailable: entry(
    503,
    503,
    '{service} is temporarily unavailable. Retry later.',
    'The service is temporarily unavailable. Retry later.',
  ),
  /** The path names no endpoint (any method). */
  UnknownEndpoint: entry(404, 404, 'No endpoint {method} {path}.', 'No such endpoint.'),
  InternalError: INTERNAL_ERROR,

  // Templates: Postmark's codes, all answered 422 as Postmark does.
  TemplateNotFound: entry(1101, 422, '{detail}', 'The template was not found.'),
  TooManyTemplates: entry(1105, 422, '{detail}', 'This organization has the most templates it may have.'),
  TemplateModelMissing: entry(1109, 422, '{detail}', 'The TemplateModel is required.'),
  TemplateFieldMissing: entry(1120, 422, '{detail}', 'A required template field is missing.'),
  TemplateFieldTooLarge: entry(1121, 422, '{detail}', 'A template field is too large.'),
  InvalidTemplateField: entry(1122, 422, '{detail}', 'A template field is invalid.'),
  TemplateFieldNotAllowed: entry(1123, 422, '{detail}', 'A template field is not allowed here.'),
  LayoutInUse: entry(1130, 422, '{detail}', 'The layout is used by templates.'),
  InvalidLayoutContent: entry(
    1131,
    422,
    '{detail}',
    "A layout's bodies must hold the content placeholder {{{ @content }}} exactly once.",
  ),
  InvalidTemplateId: INTERNAL_ERROR,
  // Webhooks (ours: Postmark documents no ErrorCode for them). A body that does not fit the route's schema is
  // IncompatibleJson (403) like any other; a field that breaks a webhook rule has its own code, named in Message.
  InvalidWebhookUrl: entry(1403, 422, '{detail}', 'The webhook Url is invalid.'),
  InvalidWebhookHttpAuth: entry(1404, 422, '{detail}', 'HttpAuth is invalid.'),
  InvalidWebhookHeaders: entry(1405, 422, '{detail}', 'HttpHeaders is invalid.'),
  InvalidWebhookTriggers: entry(1406, 422, '{detail}', 'Triggers is invalid.'),
  /** Ours: the Url's host is (or resolves to) a loopback, private, link-local or metadata address. */
  WebhookUrlNotAllowed: entry(
    1402,
    422,
    '{detail}',
    'The webhook Url points to an address the service does not call (loopback, private, link-local or metadata).',
  ),
  /** Ours: Postmark's limit of ten webhooks per message stream. */
  TooManyWebhooks: entry(1401, 422, '{detail}', 'This message stream already has the most webhooks it may have.'),
  WebhookNotFound: entry(1400, 404, 'Webhook {webhookId} was not found.', 'This webhook was not found.'),
  /** Ours: the delivery log has no such call of this webhook (too old, another webhook's or organization's). */
  WebhookDeliveryNotFound: entry(
    1407,
    404,
    'Webhook {webhookId} has no delivery {deliveryId}.',
    'This webhook delivery was not found.',
  ),

  // Inbound mail: server settings, inbound rules, inbound messages (ours, but 701: Postmark's "message not found").
  InvalidInboundDomain: entry(1601, 422, '{detail}', 'The InboundDomain is invalid.'),
  InvalidInboundSpamThreshold: entry(1602, 422, '{detail}', 'InboundSpamThreshold is invalid.'),
  InboundDomainTaken: entry(1603, 422, '{detail}', "This InboundDomain is already another server's."),
  InboundDomainNotSet: entry(1604, 422, '{detail}', 'The server has no InboundDomain to verify.'),
  InboundDomainVerificationFailed: entry(1605, 422, '{detail}', "The InboundDomain's MX record was not found."),
  InboundDomainChanged: entry(1606, 422, '{detail}', 'The InboundDomain changed meanwhile: verify it again.'),
  InvalidInboundRule: entry(1610, 422, '{detail}', 'The Rule is not an email address or a domain.'),
  InboundRuleAlreadyExists: entry(1611, 422, '{detail}', 'This rule already exists.'),
  InboundRuleNotFound: entry(1612, 404, 'Inbound rule {ruleId} was not found.', 'This inbound rule was not found.'),
  TooManyInboundRules: entry(1613, 422, '{detail}', 'The organization has the most inbound rules it may have.'),
  InboundMessageNotFound: entry(701, 404, 'Inbound message {messageId} was not found.', 'This message was not found.'),
  InboundMessageNotBlocked: entry(1620, 422, '{detail}', 'Only a blocked inbound message can bypass the rules.'),
  InboundMessageNotFailed: entry(1621, 422, '{detail}', 'Only a failed inbound message can be retried.'),

  // The console (/console/api, ours). Its sessions, then the account rules its members can break (the admin command
  // line reaches the same codes and words them itself).
  ConsoleSignInRequired: entry(1500, 401, 'Sign in to the console'),
  ConsoleCsrfRejected: entry(1501, 403, 'Missing or wrong X-CSRF-Token header: reload the page'),
  SignInLinkInvalid: entry(1502, 401, 'This sign-in link has expired or was already used. Ask for a new one.'),
  RoleNotAllowed: entry(1503, 403, '{detail}', 'Your role does not allow this; ask an admin of the organization.'),
  InvalidEmail: entry(1510, 422, '{detail}', 'The email address is invalid.'),
  InvalidRole: entry(1511, 422, '{detail}', 'The role must be admin, developer or viewer.'),
  MemberAlreadyExists: entry(1512, 409, '{detail}', 'This address is already a member of the organization.'),
  MemberNotFound: entry(1513, 404, '{detail}', 'This member was not found.'),
  CannotRemoveLastAdmin: entry(
    1514,
    409,
    'The last admin of the organization can be neither removed nor demoted: make another member an admin first.',
  ),
  InvalidDomainName: entry(1520, 422, '{detail}', 'The domain name is invalid.'),
  DomainAlreadyAdded: entry(1521, 409, '{detail}', 'This domain is already a domain of the organization.'),
  DomainNotFound: entry(1522, 404, '{detail}', 'This domain was not found.'),
  DomainVerificationFailed: entry(1523, 422, '{detail}', 'The ownership TXT record was not found.'),
  ReturnPathNotAssigned: entry(1524, 422, '{detail}', 'This domain has no return path yet.'),
  ReturnPathVerificationFailed: entry(
    1525,
    422,
    '{detail}',
    'The return path’s MX or SPF record was not found as published.',
  ),
  InvalidApiKeyName: entry(1530, 422, '{detail}', 'The key name is invalid.'),
  InvalidApiKeyMode: entry(1531, 422, '{detail}', "The mode must be 'live' or 'test'."),
  NoScopes: entry(1532, 422, '{detail}', 'An API key needs at least one scope.'),
  UnknownScope: entry(1533, 422, '{detail}', 'A scope is unknown.'),
  DuplicateScope: entry(1534, 422, '{detail}', 'A scope is given twice.'),
  ApiKeyNotFound: entry(1535, 404, '{detail}', 'This API key was not found.'),
  ApiKeyAlreadyRevoked: entry(1536, 409, '{detail}', 'This API key is already revoked.'),
  InvalidEmailAddress: entry(1540, 422, '{detail}', 'The email address is invalid.'),

  // Domain codes answered as an internal error.
  /** The webhooks process's disabling command, never an API request's. */
  InvalidWebhookDisabling: INTERNAL_ERROR,
  MessageAlreadyAccepted: INTERNAL_ERROR,
  MessageIdMismatch: INTERNAL_ERROR,
  OrganizationMismatch: INTERNAL_ERROR,
  MessageNotAccepted: INTERNAL_ERROR,
  MessageNotSent: INTERNAL_ERROR,
  RecipientNotInMessage: INTERNAL_ERROR,
  InvalidRetryInput: INTERNAL_ERROR,
  InvalidSuppressionOrigin: INTERNAL_ERROR,
  InvalidApiKeySecret: INTERNAL_ERROR,
  InvalidApiKeyId: INTERNAL_ERROR,
  ApiKeyAlreadyExists: INTERNAL_ERROR,
  InvalidKeyHash: INTERNAL_ERROR,
  DuplicateKeyHash: INTERNAL_ERROR,
  InvalidKeyPrefix: INTERNAL_ERROR,
  OrganizationNotFound: INTERNAL_ERROR,
  OrganizationAlreadyExists: INTERNAL_ERROR,
  InvalidOrganizationId: INTERNAL_ERROR,
  InvalidOrganizationName: INTERNAL_ERROR,
  InvalidVerificationToken: INTERNAL_ERROR,
  InvalidDkimSelector: INTERNAL_ERROR,
  InvalidDkimPublicKey: INTERNAL_ERROR,
  InvalidDkimPrivateKey: INTERNAL_ERROR,
  InvalidMailHost: INTERNAL_ERROR,
  // The service's settings (SENDLINE_RETURN_PATH_LABEL), and assigning a return path (the admin command line's).
  InvalidReturnPathLabel: INTERNAL_ERROR,
  ReturnPathAlreadyAssigned: INTERNAL_ERROR,
  InvalidAllowance: INTERNAL_ERROR,
  InvalidTimestamp: INTERNAL_ERROR,
  MissingEventId: INTERNAL_ERROR,
  // The caller draws a fresh id and seals the secret: a clash or a missing secret is the service's own fault.
  InvalidWebhookId: INTERNAL_ERROR,
  WebhookAlreadyExists: INTERNAL_ERROR,
  InvalidWebhookSecret: INTERNAL_ERROR,
  // The caller draws the inbound hash and the rule ids.
  InvalidInboundHash: INTERNAL_ERROR,
  InvalidInboundRuleId: INTERNAL_ERROR,
  InboundRuleIdTaken: INTERNAL_ERROR,
  // Every domain code must be here: a new DomainErrorCode without an answer does not compile.
} as const satisfies Record<DomainErrorCode, ErrorCatalogueEntry> & Record<string, ErrorCatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export type ErrorParams = Readonly<Record<string, string | number | readonly string[] | undefined>>;

export interface DescribedError {
  ErrorCode: number;
  Message: string;
  httpStatus: number;
}

export function isErrorCode(code: string): code is ErrorCode {
  return Object.prototype.hasOwnProperty.call(ERROR_CATALOGUE, code);
}

const PLACEHOLDER = /\{(\w+)\}/g;

function render(template: string, params: ErrorParams): string | undefined {
  let complete = true;
  const text = template.replace(PLACEHOLDER, (_, name: string) => {
    const value = params[name];
    if (value === undefined || (Array.isArray(value) && value.length === 0) || value === '') {
      complete = false;
      return '';
    }
    return Array.isArray(value) ? value.join(', ') : String(value);
  });
  return complete ? text : undefined;
}

/**
 * The answer for a code: `{ ErrorCode, Message }` for the body and the HTTP status. A string that is not a
 * catalogue code is answered as InternalError: the table is the only source of answers.
 */
export function describeError(code: string, params: ErrorParams = {}): DescribedError {
  const found: ErrorCatalogueEntry = isErrorCode(code) ? ERROR_CATALOGUE[code] : ERROR_CATALOGUE.InternalError;
  return {
    ErrorCode: found.errorCode,
    Message: render(found.message, params) ?? found.genericMessage,
    httpStatus: found.httpStatus,
  };
}

/** The 406 message for these addresses, in Postmark's pattern (clients read the addresses back out of it). */
export function inactiveRecipientsMessage(addresses: readonly string[]): string {
  return describeError('InactiveRecipients', { addresses }).Message;
}

/** An answer from the error catalogue: a stable code and the parameters of its message. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly params: ErrorParams = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(code);
    this.name = 'ApiError';
  }
}

/** The HTTP status and Postmark-style body for a catalogue code (any other string: InternalError). */
export function errorAnswer(code: string, params: ErrorParams = {}): { status: number; body: PostmarkError } {
  const described = describeError(code, params);
  return { status: described.httpStatus, body: { ErrorCode: described.ErrorCode, Message: described.Message } };
}

export function sendError(reply: FastifyReply, code: ErrorCode, params: ErrorParams = {}): FastifyReply {
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
function fromFastifyError(error: FastifyError): { code: ErrorCode; params: ErrorParams } | undefined {
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

/** The answer to a path no route has (app.ts's not-found handler): 404, Postmark-style, from the catalogue. */
export function notFoundAnswer(method: string, url: string): { status: number; body: PostmarkError } {
  return errorAnswer('UnknownEndpoint', { method, path: url.split('?')[0] });
}
