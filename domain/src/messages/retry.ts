import { DomainError } from '../domainError';

/**
 * When to try a deferred recipient again: exponential backoff with jitter, capped, and a deadline after
 * which the recipient soft-bounces. Pure: the caller passes the clock and a random fraction.
 *
 * The n-th retry (after n failed attempts) waits `min(initialDelayMs × multiplier^(n-1), maxDelayMs)`,
 * less a random share of up to `jitter` of it (delay × (1 − jitter × random)), so attempts of many
 * messages that failed together spread out and the cap is never exceeded. A retry is never scheduled
 * after `firstAttemptAt + giveUpAfterMs`: the last one is moved to that deadline, and once the deadline
 * has passed the answer is to give up.
 *
 * With the defaults: 1 min, 2, 4, 8, … capped at 4 h, giving up 72 h after the first attempt.
 */
export interface RetryPolicy {
  initialDelayMs: number;
  multiplier: number;
  maxDelayMs: number;
  giveUpAfterMs: number;
  /** The largest share of a delay taken off at random, 0..1. */
  jitter: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  initialDelayMs: 60_000,
  multiplier: 2,
  maxDelayMs: 4 * 60 * 60 * 1000,
  giveUpAfterMs: 72 * 60 * 60 * 1000,
  jitter: 0.2,
};

export interface RetryInput {
  /** Failed attempts so far: 1 after the first failure. */
  attempt: number;
  /** Epoch milliseconds of the first attempt. */
  firstAttemptAt: number;
  /** Epoch milliseconds, the caller's clock. */
  now: number;
  /** A random fraction in [0, 1], from the caller (the domain has no randomness of its own). */
  random: number;
}

export type RetryDecision = { retryAt: number } | { giveUp: true };

/** How long a deferred recipient waits after `attempt` failed attempts, before jitter and the deadline. */
export function deferralDelay(attempt: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY): number {
  const exponent = Math.max(0, attempt - 1);
  return Math.min(policy.initialDelayMs * policy.multiplier ** exponent, policy.maxDelayMs);
}

export function nextRetry(input: RetryInput, policy: RetryPolicy = DEFAULT_RETRY_POLICY): RetryDecision {
  const { attempt, firstAttemptAt, now, random } = input;
  if (!Number.isInteger(attempt) || attempt < 1) {
    throw new DomainError('InvalidRetryInput', `attempt must be a whole number ≥ 1, not ${attempt}`);
  }
  if (!(random >= 0 && random <= 1)) {
    throw new DomainError('InvalidRetryInput', `random must be a fraction in [0, 1], not ${random}`);
  }
  const deadline = firstAttemptAt + policy.giveUpAfterMs;
  if (now >= deadline) return { giveUp: true };
  const jitter = Math.min(Math.max(policy.jitter, 0), 1);
  const delay = Math.round(deferralDelay(attempt, policy) * (1 - jitter * random));
  return { retryAt: Math.min(now + delay, deadline) };
}
