import { declaredRetriable, InfrastructureError } from './errors';

/**
 * A service the apps depend on being out of reach (down, restarting, not answering in time) is not a broken
 * request: the API answers 503 with Retry-After, and a consumer waits for the service instead of counting the
 * failure against the event (it never dead-letters a good event because Redis was down for 30 s).
 */
export type Dependency = 'kafka' | 'registry' | 'redis' | 'clickhouse';

/** How an answer names each service (the API's 503 message). */
export const DEPENDENCY_NAMES: Record<Dependency, string> = {
  kafka: 'The event log (Kafka)',
  registry: 'The schema registry',
  redis: 'The view store (Redis)',
  clickhouse: 'The activity store (ClickHouse)',
};

/** A service could not be reached or did not answer in time. */
export class ServiceUnavailableError extends InfrastructureError {
  constructor(
    readonly service: Dependency,
    message: string,
    options: { retriable: boolean; cause?: unknown },
  ) {
    super(`${service}Unavailable`, message, options);
    this.name = 'ServiceUnavailableError';
  }
}

/** Codes our adapters give their failures to reach a service. */
const CODES: Record<string, Dependency> = {
  KafkaUnavailable: 'kafka',
  AppendTimeout: 'kafka',
  SchemaRegistrationFailed: 'registry',
  LedgerUnavailable: 'redis',
  AccountsViewUnavailable: 'redis',
};

/** Codes of our adapters' errors whose cause, when it is a network failure, means that service is out of reach. */
const VIA: Record<string, Dependency> = {
  ActivityWriteFailed: 'clickhouse',
};

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'EAI_AGAIN',
]);

/** A connection refused, reset or timed out (Node's codes; the ClickHouse client's own timeout). */
function isNetworkError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return (
    (typeof code === 'string' && NETWORK_CODES.has(code)) ||
    error.message === 'Timeout error.' ||
    error.message === 'socket hang up'
  );
}

/** ioredis's own failures when the connection is gone or a command outlived `commandTimeout`. */
function isRedisConnectionError(error: Error): boolean {
  const message = error.message ?? '';
  return (
    error.name === 'MaxRetriesPerRequestError' ||
    message === 'Command timed out' ||
    message === 'Connection is closed.' ||
    message.startsWith("Stream isn't writeable") ||
    message.startsWith('Command aborted due to connection close') ||
    // A restarted Redis answers LOADING while it reads its append-only file back.
    message.startsWith('LOADING ') ||
    // A Redis Cluster while a master fails over (its slots unserved until the replica is promoted), or out of reach.
    message.startsWith('CLUSTERDOWN') ||
    // A slot's redirection to a master that is gone, answered until the cluster has promoted its replica.
    message.startsWith('MOVED ') ||
    message.startsWith('ASK ') ||
    message.startsWith('TRYAGAIN') ||
    message.startsWith('Failed to refresh slots cache') ||
    message.startsWith('None of startup nodes is available') ||
    message.startsWith('Too many Cluster redirections') ||
    message === "Cluster isn't ready and enableOfflineQueue options is false" ||
    error.name === 'ClusterAllFailedError'
  );
}

/**
 * Which service `error` says is out of reach, if any: our adapters' errors by their code or class, and the
 * Redis client's connection failures, which reach the callers of the views as they are. An error that
 * declares itself non-retriable for another reason (a delivery guard that could not be written, say) wraps
 * its cause on purpose and is not looked into.
 */
export function unavailableService(error: unknown): Dependency | undefined {
  let via: Dependency | undefined;
  for (let current = error, depth = 0; current instanceof Error && depth < 6; depth++) {
    if (current instanceof ServiceUnavailableError) return current.service;
    if (current instanceof InfrastructureError) {
      const service = CODES[current.code];
      if (service) return service;
      via = VIA[current.code] ?? via;
      // Retries that ran out say nothing of their own: what failed is their cause.
      if (!current.retriable && current.code !== 'RetriesExhausted') return undefined;
    } else if (isRedisConnectionError(current)) {
      return 'redis';
    } else if (via && isNetworkError(current)) {
      return via;
    }
    current = current.cause;
  }
  return undefined;
}

/**
 * Whether a consumer should wait for a service rather than count the failure against the event: the error names
 * an unreachable service and does not declare itself non-retriable (a sender that could not write its guard after
 * a 250 must not send again, whatever the cause), or it is an append Kafka did not answer (see unansweredAppend).
 */
export function isOutage(error: unknown): boolean {
  if (unavailableService(error) === undefined) return false;
  return declaredRetriable(error) !== false || unansweredAppend(error);
}

/**
 * An append Kafka never answered: no broker reachable, or no acknowledgement in time. It declares itself
 * non-retriable because it may still land, so its caller must not assume either way (the API answers 503 and the
 * client retries with its Idempotency-Key). A consumer's handler may take it for an outage all the same: handling
 * the event again appends the same events again (their ids are derived from what they are about), exactly what a
 * crash before the commit does, and nothing is sent twice (a sender's guard is in Redis, not in this append).
 * Dead-lettering the event instead loses it: a message whose MessageSent append went unanswered was never sent.
 */
function unansweredAppend(error: unknown): boolean {
  return (
    (error instanceof ServiceUnavailableError && error.service === 'kafka') ||
    (error instanceof InfrastructureError && error.code === 'AppendTimeout')
  );
}

/**
 * Races `work` against a deadline; past it, the answer is a ServiceUnavailableError for `service` (the work
 * itself goes on in the background: its outcome is unknown, which is why the error is not retriable blindly).
 */
export async function withDeadline<T>(
  service: Dependency,
  what: string,
  ms: number,
  work: Promise<T>,
  options: { retriable: boolean } = { retriable: true },
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ServiceUnavailableError(service, `${what}: no answer within ${ms} ms`, options)),
      ms,
    );
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
