import { DomainError } from '../domainError';

/**
 * Allowance: how many messages an organization may send per calendar month (UTC), or null for no limit.
 * The count is kept per period (e.g. a Redis counter named after allowancePeriod(now), expiring at
 * the period's end); only live sends to non-suppressed recipients use it.
 *
 * Dates are computed with integer arithmetic on the epoch number (the proleptic Gregorian calendar,
 * after Howard Hinnant's `civil_from_days` / `days_from_civil`), from the caller's `now`.
 */

const DAY_MS = 86_400_000;

export interface AllowancePeriodBounds {
  /** 'YYYY-MM'. */
  period: string;
  /** First millisecond of the month, epoch ms UTC. */
  startsAt: number;
  /** First millisecond of the next month (exclusive end), epoch ms UTC. */
  endsAt: number;
}

function civilFromDays(days: number): { year: number; month: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1_460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153); // 0 = March
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return { year, month };
}

function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

function monthOf(now: number): { year: number; month: number } {
  if (typeof now !== 'number' || !Number.isFinite(now)) {
    throw new DomainError('InvalidTimestamp', `not an epoch time in milliseconds: ${String(now)}`);
  }
  const civil = civilFromDays(Math.floor(now / DAY_MS));
  if (civil.year < 0 || civil.year > 9999) {
    throw new DomainError('InvalidTimestamp', `epoch time ${now} is outside the years 0000..9999`);
  }
  return civil;
}

function label(year: number, month: number): string {
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}`;
}

/** The UTC calendar month holding `now` (epoch ms), as 'YYYY-MM'. Throws DomainError 'InvalidTimestamp'. */
export function allowancePeriod(now: number): string {
  const { year, month } = monthOf(now);
  return label(year, month);
}

/** The period holding `now` with its bounds, e.g. to expire a usage counter when the month ends. */
export function allowancePeriodBounds(now: number): AllowancePeriodBounds {
  const { year, month } = monthOf(now);
  const next = month === 12 ? { year: year + 1, month: 1 } : { year, month: month + 1 };
  return {
    period: label(year, month),
    startsAt: daysFromCivil(year, month, 1) * DAY_MS,
    endsAt: daysFromCivil(next.year, next.month, 1) * DAY_MS,
  };
}

/** A valid allowance: a whole number of messages ≥ 0 (0 stops sending), or null for no limit. */
export function isValidAllowance(messagesPerMonth: unknown): messagesPerMonth is number | null {
  return messagesPerMonth === null || (Number.isSafeInteger(messagesPerMonth) && (messagesPerMonth as number) >= 0);
}
