import { describe, expect, it } from 'vitest';
import { isValidDomainName, normalizeDomainName, normalizeMemberEmail } from '../../src/accounts';
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
