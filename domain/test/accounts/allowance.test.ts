import { describe, expect, it } from 'vitest';
import { allowancePeriod, allowancePeriodBounds } from '../../src/accounts';
import { DomainError } from '../../src/domainError';

describe('allowance period', () => {
  it('is the UTC calendar month as YYYY-MM', () => {
    expect(allowancePeriod(Date.UTC(2025, 6, 14, 8, 30))).toBe('2025-07');
  });

  it('puts the last millisecond of a month in that month', () => {
    expect(allowancePeriod(Date.UTC(2025, 1, 1) - 1)).toBe('2025-01');
  });

  it('puts the first millisecond of a month in the new month', () => {
    expect(allowancePeriod(Date.UTC(2025, 1, 1))).toBe('2025-02');
  });

  it('counts a leap day in February', () => {
    expect(allowancePeriod(Date.UTC(2024, 1, 29, 23, 59, 59, 999))).toBe('2024-02');
  });

  it('handles the turn of the year', () => {
    expect(allowancePeriod(Date.UTC(2026, 0, 1) - 1)).toBe('2025-12');
  });

  it('handles times before the epoch', () => {
    expect(allowancePeriod(-1)).toBe('1969-12');
  });

  it('agrees with the calendar every 10 days and 7 hours from 1968 to 2110', () => {
    const step = 10 * 86_400_000 + 7 * 3_600_000;
    for (let t = Date.UTC(1968, 0, 1); t < Date.UTC(2110, 0, 1); t += step) {
      expect(allowancePeriod(t), `at ${t}`).toBe(new Date(t).toISOString().slice(0, 7));
    }
  });

  it('gives the bounds of the month, the end being the start of the next', () => {
    expect(allowancePeriodBounds(Date.UTC(2025, 11, 31, 23, 0))).toEqual({
      period: '2025-12',
      startsAt: Date.UTC(2025, 11, 1),
      endsAt: Date.UTC(2026, 0, 1),
    });
  });

  it('gives a leap February 29 days', () => {
    const { startsAt, endsAt } = allowancePeriodBounds(Date.UTC(2024, 1, 10));
    expect((endsAt - startsAt) / 86_400_000).toBe(29);
  });

  it('refuses a time that is not a number: InvalidTimestamp', () => {
    let thrown: unknown;
    try {
      allowancePeriod(Number.NaN);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(DomainError);
    expect((thrown as DomainError).code).toBe('InvalidTimestamp');
  });
});
