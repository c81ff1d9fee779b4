import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  readReturnPathAddress,
  readReturnPathLocalPart,
  returnPathAddress,
  returnPathKey,
  returnPathToken,
} from '../../src';

const key = returnPathKey(Buffer.alloc(32, 7));
const otherKey = returnPathKey(Buffer.alloc(32, 8));
const messageId = '3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f';

describe('the return-path token', () => {
  it('names the message and the recipient it was made for, read back from the whole address', () => {
    const address = returnPathAddress(key, { messageId, recipientIndex: 3 }, 'bounces.example.com');
    expect(address).toMatch(/^b\.[a-z2-7]{44}@bounces\.example\.com$/);
    expect(readReturnPathAddress(key, address)).toEqual({ ok: true, messageId, recipientIndex: 3 });
  });

  it('is a valid local part under 64 octets, and reads the same when a server changed its case', () => {
    const token = returnPathToken(key, { messageId, recipientIndex: 255 });
    expect(`b.${token}`.length).toBeLessThan(64);
    expect(readReturnPathLocalPart(key, `B.${token.toUpperCase()}`)).toEqual({
      ok: true,
      messageId,
      recipientIndex: 255,
    });
  });

  it('gives each recipient of a message its own token', () => {
    const tokens = new Set(
      Array.from({ length: 50 }, (_, i) => returnPathToken(key, { messageId, recipientIndex: i })),
    );
    expect(tokens.size).toBe(50);
  });

  it('refuses a token signed with another key, or with one character changed', () => {
    const token = returnPathToken(key, { messageId, recipientIndex: 0 });
    expect(readReturnPathLocalPart(otherKey, `b.${token}`)).toEqual({ ok: false, reason: 'BadSignature' });
    for (let i = 0; i < token.length; i++) {
      const changed = token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1);
      expect(readReturnPathLocalPart(key, `b.${changed}`).ok, `position ${i}`).toBe(false);
    }
  });

  it('says why an address names no message: not ours, malformed', () => {
    expect(readReturnPathLocalPart(key, 'postmaster')).toEqual({ ok: false, reason: 'NotAReturnPath' });
    expect(readReturnPathLocalPart(key, 'b.short')).toEqual({ ok: false, reason: 'Malformed' });
    expect(readReturnPathLocalPart(key, `b.${'1'.repeat(44)}`)).toEqual({ ok: false, reason: 'Malformed' });
  });

  it('reads back every one of 1,000 random messages and indexes', () => {
    for (let i = 0; i < 1_000; i++) {
      const target = { messageId: randomUUID(), recipientIndex: i % 256 };
      expect(readReturnPathLocalPart(key, `b.${returnPathToken(key, target)}`)).toEqual({ ok: true, ...target });
    }
  });

  it('refuses a message id that is not a UUID and an index past one byte', () => {
    expect(() => returnPathToken(key, { messageId: 'x', recipientIndex: 0 })).toThrow(TypeError);
    expect(() => returnPathToken(key, { messageId, recipientIndex: 256 })).toThrow(RangeError);
  });
});
