import { describe, expect, it } from 'vitest';
import { apiWorkersFromEnv } from '../../src/workers';

describe('the number of API workers', () => {
  it('is one per core by default', () => {
    expect(apiWorkersFromEnv({}, 8)).toBe(8);
  });

  it('is at least two by default, so that a worker’s death leaves one serving', () => {
    expect(apiWorkersFromEnv({}, 1)).toBe(2);
    expect(apiWorkersFromEnv({ SENDLINE_API_WORKERS: ' ' }, 1)).toBe(2);
  });

  it('is SENDLINE_API_WORKERS when set, one included', () => {
    expect(apiWorkersFromEnv({ SENDLINE_API_WORKERS: '1' }, 8)).toBe(1);
    expect(apiWorkersFromEnv({ SENDLINE_API_WORKERS: '3' }, 8)).toBe(3);
  });

  it('refuses anything but a whole number ≥ 1', () => {
    for (const raw of ['0', 'two', '1.5', '-1']) {
      expect(() => apiWorkersFromEnv({ SENDLINE_API_WORKERS: raw }, 2)).toThrow(
        `SENDLINE_API_WORKERS must be a whole number ≥ 1, not "${raw}"`,
      );
    }
  });
});
