import { describe, expect, it } from 'vitest';
import { isValidDomainName, normalizeDomainName, normalizeMemberEmail } from '../../src/accounts';
import { parseEmailAddress } from '../../src/validation';
import { DomainError } from '../../src/domainError';

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof DomainError ? error.code : `not a DomainError: ${String(error)}`;
  }
  return undefined;
}

const label63 = 'a'.repeat(63);
/** 253 characters: three labels of 63 and one of 61, with three dots. */
const name253 = `${label63}.${label63}.${label63}.${'a'.repeat(61)}`;

describe('domain names', () => {
  it('lowercases a name', () => {
    expect(normalizeDomainName('Mail.Acme.EXAMPLE')).toBe('mail.acme.example');
  });

  it.each([
    ['two labels', 'acme.example'],
    ['hyphens and digits inside labels', 'a-b.c0-9.example'],
    ['a punycode label', 'xn--bcher-kva.example'],
    ['a 63-character label', `${label63}.example`],
    ['253 characters', name253],
    ['a one-character label', 'a.io'],
  ])('accepts %s', (_what, name) => {
    expect(isValidDomainName(name)).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['a single label', 'example'],
    ['a trailing dot', 'acme.example.'],
    ['an empty label', 'acme..example'],
    ['a label starting with "-"', '-acme.example'],
    ['a label ending with "-"', 'acme-.example'],
    ['an underscore', 'ac_me.example'],
    ['a space', 'acme .example'],
    ['a non-ASCII character (IDN not in punycode)', 'bücher.example'],
    ['a 64-character label', `${label63}a.example`],
    ['254 characters', `${name253}a`],
  ])('refuses %s', (_what, name) => {
    expect(codeOf(() => normalizeDomainName(name))).toBe('InvalidDomainName');
  });
});

describe('member addresses', () => {
  it('lowercases an address', () => {
    expect(normalizeMemberEmail('Ada.Lovelace+ops@Acme.Example')).toBe('ada.lovelace+ops@acme.example');
  });

  it.each([
    ['no "@"', 'ada.acme.example'],
    ['an empty local part', '@acme.example'],
    ['a single-label domain', 'ada@localhost'],
    ['a space', 'ada lovelace@acme.example'],
    ['two dots in a row', 'ada..l@acme.example'],
    ['a local part over 64 characters', `${'a'.repeat(65)}@acme.example`],
  ])('refuses an address with %s', (_what, email) => {
    expect(codeOf(() => normalizeMemberEmail(email))).toBe('InvalidEmail');
  });
});

describe('member addresses follow the recipients’ rules', () => {
  it.each([
    ['surrounding spaces', '  ada@acme.example  ', 'ada@acme.example'],
    ['a quoted local part', '"ada lovelace"@acme.example', '"ada lovelace"@acme.example'],
    ['a comment, which is dropped', 'ada(ops)@acme.example', 'ada@acme.example'],
    ['a UTF-8 local part', 'José@Acme.Example', 'josé@acme.example'],
  ])('given %s, a member address is accepted as a recipient would be', (_what, input, expected) => {
    // given an address a send request accepts as a recipient
    const asRecipient = parseEmailAddress(input);
    // when it is given as a member's email
    const asMember = normalizeMemberEmail(input);
    // then both read it the same, lowercased
    expect(asRecipient).toEqual({ ok: true, value: expected });
    expect(asMember).toBe(expected);
  });

  it.each([
    ['a display name', 'Ada <ada@acme.example>'],
    ['two addresses', 'ada@acme.example, bob@acme.example'],
    ['an address literal', 'ada@[192.0.2.1]'],
    ['a line break', 'ada@acme.example\n'],
  ])('given %s, a member address is refused as a recipient would be', (_what, input) => {
    expect(parseEmailAddress(input).ok).toBe(false);
    expect(codeOf(() => normalizeMemberEmail(input))).toBe('InvalidEmail');
  });

  it('keeps the refusal message the admin console rewords', () => {
    expect(() => normalizeMemberEmail('not-an-email')).toThrow('invalid email address "not-an-email"');
  });
});
