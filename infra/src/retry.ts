import { declaredRetriable, RetriesExhaustedError } from './errors';

export interface RetryOptions {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  factor?: number;
  /** 0..1: how much of each delay is random (full jitter at 1). */
  jitter?: number;
  /** Stops waiting and gives up at once when aborted. */
  signal?: AbortSignal;
  /**
   * Decides whether a failure is worth another attempt. Default: only errors that
   * declare `retriable: true`; an unknown error is not retried.
   */
  shouldRetry?: (error: unknown, attempt: number) => boolean;
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  random?: () => number;
}

/** The delay before attempt `attempt + 1` (attempt counts from 1). */
export function backoffDelay(attempt: number, options: RetryOptions, random: () => number = Math.random): number {
  const factor = options.factor ?? 2;
  const base = Math.min(options.maxDelayMs, options.initialDelayMs * factor ** (attempt - 1));
  const jitter = options.jitter ?? 0.2;
  return Math.round(base * (1 - jitter) + base * jitter * random());
}

/** The one retry helper: exponential backoff with jitter, an early stop, and its own error when attempts run out. */
export async function retry<T>(operation: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const shouldRetry = options.shouldRetry ?? ((error: unknown) => declaredRetriable(error) === true);
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation(attempt);
    } catch (error) {
      if (!shouldRetry(error, attempt)) throw error;
      if (attempt >= options.maxAttempts) throw new RetriesExhaustedError(attempt, error);
      if (options.signal?.aborted) throw error;
      const delay = backoffDelay(attempt, options, options.random);
      options.onRetry?.(error, attempt, delay);
      await sleep(delay, options.signal);
    }
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
