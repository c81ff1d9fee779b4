/** Why a call failed. See the README for what each one means and whether to retry. */
export type SendlineErrorCode =
  /** No API key was passed and SENDLINE_API_KEY is not set. No request was made. */
  | 'missing_api_key'
  /** `fetch` rejected: DNS, connection refused or reset, TLS. No HTTP response arrived. */
  | 'network_error'
  /** The client's timer fired and aborted the request. The outcome is unknown. */
  | 'timeout'
  /** The API answered with a body that is not JSON or not of the expected shape. */
  | 'invalid_response'
  /** The API answered with a non-2xx status and a JSON error body. */
  | 'http_error';

export interface SendlineErrorInit {
  code: SendlineErrorCode;
  /** HTTP status, or 0 when no HTTP response arrived. */
  status: number;
  retryAfter?: number | null;
  errorCode?: number | null;
  /** The Idempotency-Key the failed send carried. */
  idempotencyKey?: string | null;
  cause?: unknown;
}

/**
 * The one error class the client throws (it is also exported as `ClientError`).
 * The client never retries by itself: look at `code`, `status` and `retryAfter`
 * to decide, and retry sends with the same idempotency key.
 */
export class SendlineError extends Error {
  override readonly name = 'SendlineError';
  /** Machine-readable reason (see {@link SendlineErrorCode}). */
  readonly code: SendlineErrorCode;
  /** HTTP status of the answer, or 0 when no HTTP response arrived. */
  readonly status: number;
  /** Seconds to wait before retrying, from the Retry-After header; null when absent or unreadable. */
  readonly retryAfter: number | null;
  /** The API's ErrorCode (e.g. 406 inactive recipients, 300 invalid request) for `http_error`; otherwise null. */
  readonly errorCode: number | null;
  /**
   * The Idempotency-Key the request carried (every send and batch carries one: yours, or a fresh one the
   * client made); null for other calls. Retry a failed send with `{ idempotencyKey: error.idempotencyKey }`
   * and it is sent at most once.
   */
  readonly idempotencyKey: string | null;

  constructor(message: string, init: SendlineErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.retryAfter = init.retryAfter ?? null;
    this.errorCode = init.errorCode ?? null;
    this.idempotencyKey = init.idempotencyKey ?? null;
  }
}

/**
 * Reads a Retry-After header: delta-seconds ("120") or an HTTP date, which is
 * turned into whole seconds from `nowMs` (never negative). Anything else is null.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  // An HTTP date always names a weekday or month; this keeps numbers like "1.5" from Date.parse.
  if (!/[a-z]/i.test(trimmed)) return null;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}
