import { describe, expect, it } from 'vitest';
import { returnsConfigFromEnv } from '../../src/config';

describe('the returns reader configuration', () => {
  it('reads as group returns-reader with a 30 s session by default', () => {
    expect(returnsConfigFromEnv({})).toEqual({ groupId: 'returns-reader', sessionTimeoutMs: 30_000 });
  });

  it('takes a group and a session timeout of its own', () => {
    expect(
      returnsConfigFromEnv({ SENDLINE_RETURNS_GROUP: 'bench-returns', SENDLINE_RETURNS_SESSION_TIMEOUT_MS: '6000' }),
    ).toEqual({ groupId: 'bench-returns', sessionTimeoutMs: 6000 });
  });

  it('refuses a session timeout Kafka would refuse', () => {
    expect(() => returnsConfigFromEnv({ SENDLINE_RETURNS_SESSION_TIMEOUT_MS: '500' })).toThrow(
      /SENDLINE_RETURNS_SESSION_TIMEOUT_MS/,
    );
  });
});
