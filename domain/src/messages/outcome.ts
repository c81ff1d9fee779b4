import { assertNever } from '../event';
import type { DeliveryClassification } from './classification';
import type { DeliveryOutcome, ReturnedOutcome } from './decide';
import { DEFAULT_RETRY_POLICY, nextRetry, type RetryPolicy } from './retry';

export interface OutcomeContext {
  /** This attempt's number, 1 for the first. */
  attempt: number;
  /** Epoch milliseconds of the recipient's first attempt. */
  firstAttemptAt: number;
  /** Epoch milliseconds, the caller's clock. */
  now: number;
  /** A random fraction in [0, 1] for the retry jitter. */
  random: number;
  /** The host that answered; required for Delivered, recorded as the destination server. */
  destinationServer: string;
  policy?: RetryPolicy;
}

/** A refusal for good, during the conversation or in a DSN: HardBounced or PolicyRejected, with the answer's details. */
function refusalOf(classification: Extract<DeliveryClassification, { kind: 'HardBounce' | 'PolicyRejection' }>) {
  return {
    kind: classification.kind === 'HardBounce' ? ('HardBounced' as const) : ('PolicyRejected' as const),
    smtpResponse: classification.smtpResponse,
    statusCode: classification.statusCode,
    ...(classification.enhancedStatus !== undefined && { enhancedStatus: classification.enhancedStatus }),
    summary: classification.summary,
  };
}

/**
 * The outcome to record for a classified attempt: Transient becomes Deferred with the next attempt's time
 * (see `nextRetry`), or SoftBounced (RetriesExhausted) once the 72 h are over; a 5xx SoftBounce becomes
 * SoftBounced (PermanentFailure); the rest map one to one.
 */
export function deliveryOutcomeOf(classification: DeliveryClassification, context: OutcomeContext): DeliveryOutcome {
  const optionalResponse = (smtpResponse: string | undefined) => (smtpResponse === undefined ? {} : { smtpResponse });
  switch (classification.kind) {
    case 'Delivered':
      return {
        kind: 'Delivered',
        smtpResponse: classification.smtpResponse,
        destinationServer: context.destinationServer,
      };
    case 'HardBounce':
    case 'PolicyRejection':
      return refusalOf(classification);
    case 'SoftBounce':
      return {
        kind: 'SoftBounced',
        reason: 'PermanentFailure',
        smtpResponse: classification.smtpResponse,
        summary: classification.summary,
        attempts: context.attempt,
      };
    case 'Transient': {
      const decision = nextRetry(
        { attempt: context.attempt, firstAttemptAt: context.firstAttemptAt, now: context.now, random: context.random },
        context.policy ?? DEFAULT_RETRY_POLICY,
      );
      if ('giveUp' in decision) {
        return {
          kind: 'SoftBounced',
          reason: 'RetriesExhausted',
          ...optionalResponse(classification.smtpResponse),
          summary: classification.summary,
          attempts: context.attempt,
        };
      }
      return {
        kind: 'Deferred',
        reason: classification.reason,
        ...optionalResponse(classification.smtpResponse),
        summary: classification.summary,
        attempt: context.attempt,
        nextAttemptAt: decision.retryAt,
      };
    }
    default:
      return assertNever(classification);
  }
}

/**
 * What a refusal or notice in a DSN means for its recipient: the same classification as an answer during the SMTP
 * conversation, recorded as a returned outcome. A DSN saying "delivered" or "relayed" means nothing new (undefined);
 * a transient status ("delayed") is a notice that moves nothing.
 */
export function returnedOutcomeOf(classification: DeliveryClassification): ReturnedOutcome | undefined {
  switch (classification.kind) {
    case 'Delivered':
      return undefined;
    case 'HardBounce':
    case 'PolicyRejection':
      return refusalOf(classification);
    case 'SoftBounce':
      return { kind: 'SoftBounced', smtpResponse: classification.smtpResponse, summary: classification.summary };
    case 'Transient':
      return {
        kind: 'DelayReported',
        ...(classification.smtpResponse !== undefined && { smtpResponse: classification.smtpResponse }),
        ...(classification.enhancedStatus !== undefined && { enhancedStatus: classification.enhancedStatus }),
        summary: classification.summary,
      };
    default:
      return assertNever(classification);
  }
}
