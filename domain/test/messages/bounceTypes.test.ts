import { describe, expect, it } from 'vitest';
import {
  BOUNCE_EVENT_TYPES,
  BOUNCE_KINDS,
  BOUNCE_TYPE_OF_KIND,
  bounceKindOf,
  kindsOfBounceType,
  MESSAGE_EVENT_TYPES,
} from '../../src';

describe('the bounce types (Postmark’s table)', () => {
  it('names each kind with Postmark’s type and code', () => {
    expect(
      Object.fromEntries(
        BOUNCE_KINDS.map((kind) => [kind, [BOUNCE_TYPE_OF_KIND[kind].type, BOUNCE_TYPE_OF_KIND[kind].typeCode]]),
      ),
    ).toEqual({
      HardBounced: ['HardBounce', 1],
      SoftBounced: ['SoftBounce', 4096],
      PolicyRejected: ['Blocked', 100006],
      DelayReported: ['Transient', 2],
      AutoReplied: ['AutoResponder', 64],
      SpamComplaint: ['SpamComplaint', 100001],
    });
  });

  it('suppresses for a hard bounce and a spam complaint only', () => {
    expect(BOUNCE_KINDS.filter((kind) => BOUNCE_TYPE_OF_KIND[kind].suppresses)).toEqual([
      'HardBounced',
      'SpamComplaint',
    ]);
  });

  it('knows each bounce event’s kind, and every bounce event is a message event', () => {
    expect(BOUNCE_EVENT_TYPES.map((type) => bounceKindOf({ type }))).toEqual([
      'HardBounced',
      'SoftBounced',
      'PolicyRejected',
      'DelayReported',
      'AutoReplied',
      'SpamComplaint',
    ]);
    for (const type of BOUNCE_EVENT_TYPES) expect(MESSAGE_EVENT_TYPES).toContain(type);
  });

  it('selects kinds by a Postmark type name in any case; nothing for one never produced; undefined for none', () => {
    expect(kindsOfBounceType('spamcomplaint')).toEqual(['SpamComplaint']);
    expect(kindsOfBounceType(' Transient ')).toEqual(['DelayReported']);
    expect(kindsOfBounceType('SpamNotification')).toEqual([]);
    expect(kindsOfBounceType('Bouncy')).toBeUndefined();
  });
});
