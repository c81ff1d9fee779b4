import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { nextAttemptAt, parseRetryDelays, POSTMARK_RETRY_DELAYS_MS, signWebhook } from '../../src';

describe('the Standard Webhooks signature', () => {
  it('is v1, then the base64 HMAC-SHA256 of id.timestamp.body keyed with the decoded whsec_ secret', () => {
    const key = Buffer.from('a secret of thirty-two bytes....');
    const secret = `whsec_${key.toString('base64')}`;
    const expected = createHmac('sha256', key).update('msg_1.1700000000.{"a":1}').digest('base64');
    expect(signWebhook(secret, 'msg_1', 1_700_000_000, '{"a":1}')).toBe(`v1,${expected}`);
  });

  it('changes with the body, the id and the timestamp', () => {
    const secret = 'whsec_c2VjcmV0';
    const base = signWebhook(secret, 'id', 1, 'body');
    expect(signWebhook(secret, 'id', 1, 'body!')).not.toBe(base);
    expect(signWebhook(secret, 'id2', 1, 'body')).not.toBe(base);
    expect(signWebhook(secret, 'id', 2, 'body')).not.toBe(base);
  });
});

describe('the retry schedule', () => {
  it("is Postmark's: ten retries over roughly ten and a half hours", () => {
    expect(POSTMARK_RETRY_DELAYS_MS).toHaveLength(10);
    const hours = POSTMARK_RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0) / 3_600_000;
    expect(hours).toBeGreaterThan(10);
    expect(hours).toBeLessThan(11);
  });

  it('gives the next attempt’s time after each failure, and nothing after the last', () => {
    expect(nextAttemptAt(1, 1000, [200, 400])).toBe(1200);
    expect(nextAttemptAt(2, 1000, [200, 400])).toBe(1400);
    expect(nextAttemptAt(3, 1000, [200, 400])).toBeUndefined();
  });

  it('reads a short schedule from the environment and refuses a bad one', () => {
    expect(parseRetryDelays('200, 400')).toEqual([200, 400]);
    expect(parseRetryDelays(undefined)).toBe(POSTMARK_RETRY_DELAYS_MS);
    expect(() => parseRetryDelays('1,x')).toThrow(/whole milliseconds/);
  });
});
