import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domainError';
import { deferralDelay, DEFAULT_RETRY_POLICY, nextRetry, type RetryDecision } from '../../src/messages';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const FIRST = Date.UTC(2025, 0, 6, 9, 0, 0);

function retryAt(decision: RetryDecision): number {
  if ('giveUp' in decision) throw new Error('expected a retry, got give-up');
  return decision.retryAt;
}

describe('nextRetry', () => {
  it('waits one minute after the first failure when the jitter draws nothing', () => {
    expect(nextRetry({ attempt: 1, firstAttemptAt: FIRST, now: FIRST, random: 0 })).toEqual({
      retryAt: FIRST + MINUTE,
    });
  });

  it('doubles the delay with each failed attempt', () => {
    const delays = [1, 2, 3, 4, 5].map(
      (attempt) => retryAt(nextRetry({ attempt, firstAttemptAt: FIRST, now: FIRST, random: 0 })) - FIRST,
    );
    expect(delays).toEqual([1, 2, 4, 8, 16].map((minutes) => minutes * MINUTE));
  });

  it('grows monotonically and never waits more than four hours', () => {
    let previous = 0;
    for (let attempt = 1; attempt <= 30; attempt++) {
      const delay = retryAt(nextRetry({ attempt, firstAttemptAt: FIRST, now: FIRST, random: 0.5 })) - FIRST;
      expect(delay).toBeGreaterThanOrEqual(previous);
      expect(delay).toBeLessThanOrEqual(4 * HOUR);
      previous = delay;
    }
    expect(deferralDelay(30)).toBe(4 * HOUR);
  });

  it('takes at most the jitter share off the delay, from the random fraction the caller passes', () => {
    const withoutJitter = retryAt(nextRetry({ attempt: 3, firstAttemptAt: FIRST, now: FIRST, random: 0 })) - FIRST;
    const withFullJitter = retryAt(nextRetry({ attempt: 3, firstAttemptAt: FIRST, now: FIRST, random: 1 })) - FIRST;
    expect(withoutJitter).toBe(4 * MINUTE);
    expect(withFullJitter).toBe(4 * MINUTE * (1 - DEFAULT_RETRY_POLICY.jitter));
  });

  it('counts the delay from now, not from the first attempt', () => {
    const now = FIRST + 10 * HOUR;
    expect(nextRetry({ attempt: 20, firstAttemptAt: FIRST, now, random: 0 })).toEqual({ retryAt: now + 4 * HOUR });
  });

  it('schedules the last retry at the 72-hour deadline, not after it', () => {
    const now = FIRST + 71 * HOUR;
    expect(nextRetry({ attempt: 40, firstAttemptAt: FIRST, now, random: 0 })).toEqual({ retryAt: FIRST + 72 * HOUR });
  });

  it('gives up once 72 hours have passed since the first attempt', () => {
    expect(nextRetry({ attempt: 41, firstAttemptAt: FIRST, now: FIRST + 72 * HOUR, random: 0 })).toEqual({
      giveUp: true,
    });
  });

  it('follows a custom policy', () => {
    const policy = { initialDelayMs: 1_000, multiplier: 3, maxDelayMs: 5_000, giveUpAfterMs: 60_000, jitter: 0 };
    const delays = [1, 2, 3].map((attempt) =>
      retryAt(nextRetry({ attempt, firstAttemptAt: 0, now: 0, random: 0.9 }, policy)),
    );
    expect(delays).toEqual([1_000, 3_000, 5_000]);
    expect(nextRetry({ attempt: 9, firstAttemptAt: 0, now: 60_000, random: 0 }, policy)).toEqual({ giveUp: true });
  });

  it.each([
    ['attempt 0', { attempt: 0, random: 0 }],
    ['a fractional attempt', { attempt: 1.5, random: 0 }],
    ['a random fraction above 1', { attempt: 1, random: 1.5 }],
    ['a NaN random fraction', { attempt: 1, random: Number.NaN }],
  ])('refuses %s', (_, input) => {
    expect(() => nextRetry({ ...input, firstAttemptAt: FIRST, now: FIRST })).toThrow(DomainError);
  });
});
