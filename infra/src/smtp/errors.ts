import type { DeliveryAttempt } from '@sendline/domain';
import { describeCause, InfrastructureError } from '../errors';

/**
 * What went wrong with one SMTP delivery, in our own terms (kafkajs's habit: one table from the
 * library's error codes to ours). nodemailer reports an SMTP refusal with `responseCode`, `response`
 * and `command`; a broken connection, a timeout or a DNS failure with a `code` of its own. The domain's
 * classifier (`classifyDeliveryAttempt`) takes the `attempt` this error carries.
 *
 * - `response`: the server answered with a 4xx/5xx code (RCPT TO, MAIL FROM, DATA, the greeting…).
 * - `timeout`: connecting, the greeting or the socket timed out.
 * - `connection`: the connection failed or broke (refused, reset, closed, TLS, DNS of the host).
 * - `unknown`: anything else (a bug, a stream error of our own). Never retried: nobody can say whether
 *   the receiving server took the message, and a blind retry is a duplicate email.
 *
 * `retriable` says whether a later attempt may succeed: 4xx, timeouts and connection failures yes;
 * 5xx and unknown failures no.
 */
export type DeliveryFailureKind = 'response' | 'timeout' | 'connection' | 'unknown';

export interface DeliveryErrorDetails {
  kind: DeliveryFailureKind;
  responseCode?: number;
  /** The server's reply, e.g. "550 5.1.1 <bob@example.com>: user unknown". */
  response?: string;
  /** The SMTP command the reply answered (RCPT TO, DATA, …). */
  command?: string;
  /** The recipient the error is about, when it is about one (a RCPT TO refusal). */
  recipient?: string;
  /** The host that answered or could not be reached. */
  host?: string;
  cause?: unknown;
}

/** nodemailer's error codes (and a few of node's) that mean the connection, not the message, failed. */
const CONNECTION_CODES = new Set([
  'ECONNECTION',
  'ESOCKET',
  'EDNS',
  'ETLS',
  'EPROXY',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'ECONNABORTED']);

export class DeliveryError extends InfrastructureError {
  readonly kind: DeliveryFailureKind;
  readonly responseCode: number | undefined;
  readonly response: string | undefined;
  readonly command: string | undefined;
  readonly recipient: string | undefined;
  readonly host: string | undefined;

  constructor(message: string, details: DeliveryErrorDetails) {
    const retriable =
      details.kind === 'response'
        ? details.responseCode !== undefined && details.responseCode < 500
        : details.kind !== 'unknown';
    super(deliveryErrorCode(details), message, { retriable, cause: details.cause });
    this.name = 'DeliveryError';
    this.kind = details.kind;
    this.responseCode = details.responseCode;
    this.response = details.response;
    this.command = details.command;
    this.recipient = details.recipient;
    this.host = details.host;
  }

  /** The attempt as the domain's classifier takes it; undefined for an unknown failure (not classifiable). */
  get attempt(): DeliveryAttempt | undefined {
    switch (this.kind) {
      case 'response':
        return { kind: 'response', code: this.responseCode ?? 0, text: this.response ?? this.message };
      case 'timeout':
        return { kind: 'timeout' };
      case 'connection':
        return { kind: 'connection', text: this.host ? `${this.host}: ${this.message}` : this.message };
      case 'unknown':
        return undefined;
    }
  }

  /**
   * Our error for whatever nodemailer (or node) threw. An error that is already a DeliveryError is
   * returned as it is; `recipient` and `host` fill in what the error does not say.
   */
  static from(error: unknown, context: { recipient?: string; host?: string } = {}): DeliveryError {
    if (error instanceof DeliveryError) return error;
    const e = (error ?? {}) as {
      code?: unknown;
      originalCode?: unknown;
      responseCode?: unknown;
      response?: unknown;
      command?: unknown;
      recipient?: unknown;
    };
    const code = typeof e.code === 'string' ? e.code : undefined;
    const originalCode = typeof e.originalCode === 'string' ? e.originalCode : undefined;
    const recipient = typeof e.recipient === 'string' ? e.recipient : context.recipient;
    const common = {
      ...(recipient !== undefined && { recipient }),
      ...(context.host !== undefined && { host: context.host }),
      cause: error,
    };
    if (typeof e.responseCode === 'number' && e.responseCode >= 400 && e.responseCode < 600) {
      return new DeliveryError(describeCause(error), {
        kind: 'response',
        responseCode: e.responseCode,
        response: typeof e.response === 'string' ? e.response : `${e.responseCode}`,
        ...(typeof e.command === 'string' && { command: e.command }),
        ...common,
      });
    }
    if ((code && TIMEOUT_CODES.has(code)) || (originalCode && TIMEOUT_CODES.has(originalCode))) {
      return new DeliveryError(describeCause(error), { kind: 'timeout', ...common });
    }
    if ((code && CONNECTION_CODES.has(code)) || (originalCode && CONNECTION_CODES.has(originalCode))) {
      return new DeliveryError(describeCause(error), { kind: 'connection', ...common });
    }
    return new DeliveryError(`unexpected delivery failure: ${describeCause(error)}`, { kind: 'unknown', ...common });
  }
}

function deliveryErrorCode(details: DeliveryErrorDetails): string {
  switch (details.kind) {
    case 'response':
      return details.responseCode !== undefined && details.responseCode < 500
        ? 'SmtpTransientReply'
        : 'SmtpPermanentReply';
    case 'timeout':
      return 'SmtpTimeout';
    case 'connection':
      return 'SmtpConnectionFailed';
    case 'unknown':
      return 'SmtpUnknownFailure';
  }
}
