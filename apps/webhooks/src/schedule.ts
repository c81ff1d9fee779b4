/**
 * When a failed call is tried again: Postmark's cadence for its webhooks (its support article on webhook retries),
 * ten retries over about ten and a half hours after the first attempt — 1 min, 5 min, 10 min three times, 15 min,
 * 30 min, 1 h, 2 h, 6 h between two attempts. After the last retry fails the call is given up.
 */
const MINUTE_MS = 60_000;
export const POSTMARK_RETRY_DELAYS_MS: readonly number[] = [
  1 * MINUTE_MS,
  5 * MINUTE_MS,
  10 * MINUTE_MS,
  10 * MINUTE_MS,
  10 * MINUTE_MS,
  15 * MINUTE_MS,
  30 * MINUTE_MS,
  60 * MINUTE_MS,
  120 * MINUTE_MS,
  360 * MINUTE_MS,
];

/** When attempt `attempt + 1` is due after attempt `attempt` failed at `now`, or undefined when the call gives up. */
export function nextAttemptAt(attempt: number, now: number, delays: readonly number[]): number | undefined {
  const delay = delays[attempt - 1];
  return delay === undefined ? undefined : now + delay;
}

/** `SENDLINE_WEBHOOK_RETRY_DELAYS_MS=200,400,800`: a short schedule for tests. */
export function parseRetryDelays(raw: string | undefined): readonly number[] {
  if (raw === undefined || raw.trim() === '') return POSTMARK_RETRY_DELAYS_MS;
  const delays = raw.split(',').map((part) => Number(part.trim()));
  if (delays.some((delay) => !Number.isSafeInteger(delay) || delay < 0)) {
    throw new Error(`SENDLINE_WEBHOOK_RETRY_DELAYS_MS must be whole milliseconds, comma-separated, not ${raw}`);
  }
  return delays;
}
