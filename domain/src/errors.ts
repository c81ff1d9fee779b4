/**
 * The API's error catalogue: ONE table from stable string codes to the Postmark-style `ErrorCode`, the HTTP
 * status and the message. Domain rules know only the string codes; the API's error handler turns a code
 * into an answer with `describeError` (fastify's lib/errors.js habit: stable code, template, status).
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
  InternalError: entry(500, 500, 'An internal error occurred.'),
} as const satisfies Record<string, ErrorCatalogueEntry>;

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
 * The answer for a code: `{ ErrorCode, Message }` for the body and the HTTP status. A code that is not in
 * the catalogue (a domain rule's internal code) is answered as InternalError: the table is the only
 * source of answers.
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
