import { describe, expect, it } from 'vitest';
import {
  addressDomain,
  isStrictBase64,
  isForbiddenAttachmentName,
  parseAddressList,
  parseEmailAddress,
} from '../../src/validation';
// Not exported by the package: the reference the shortcut is held to.
import { parseAddressListByRfc5322 } from '../../src/validation/addresses';

describe('parseEmailAddress', () => {
  it.each([
    ['alice@customer.example', 'alice@customer.example'],
    ['Alice@Customer.EXAMPLE', 'alice@customer.example'],
    ['  bob@x.example  ', 'bob@x.example'],
    ['first.last+tag@sub.x.example', 'first.last+tag@sub.x.example'],
    ['"quoted local"@x.example', '"quoted local"@x.example'],
    ['"a\\"b"@x.example', '"a\\"b"@x.example'],
    ['"plain"@x.example', 'plain@x.example'],
    ['j(comment)@x.example', 'j@x.example'],
    ['josé@exämple.example', 'josé@exämple.example'],
  ])('accepts %j as %j', (input, expected) => {
    expect(parseEmailAddress(input)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['an empty string', ''],
    ['no at sign', 'alice'],
    ['no domain', 'alice@'],
    ['a domain without a dot', 'alice@localhost'],
    ['two addresses', 'a@x.example, b@x.example'],
    ['a display name', 'Alice <alice@x.example>'],
    ['angle brackets', '<alice@x.example>'],
    ['a line break', 'alice@x.example\n'],
    ['double dots', 'a..b@x.example'],
  ])('refuses %s', (_, input) => {
    const result = parseEmailAddress(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain('EmailAddress');
  });

  it('refuses a value that is not a string, naming its type', () => {
    expect(parseEmailAddress(42)).toEqual({
      ok: false,
      reason: 'EmailAddress must be a string, not a number',
    });
  });
});

describe('address and attachment helpers', () => {
  it('gives the lowercased domain of an address', () => {
    expect(addressDomain('Billing@Shop.Example')).toBe('shop.example');
  });

  it.each([
    ['', true],
    ['aGk=', true],
    ['aGVsbG8=', true],
    ['aGVsbG8h', true],
    ['aGk', false],
    ['aGk==', false],
    ['a=Gk', false],
    ['aGl=', false],
    ['aGVsbG8 ', false],
  ])('isStrictBase64(%j) is %s', (text, expected) => {
    expect(isStrictBase64(text)).toBe(expected);
  });

  it.each([
    ['report.pdf', false],
    ['archive.zip', false],
    ['noextension', false],
    ['Setup.MSI', true],
    ['script.vbs', true],
    ['tool.jar', true],
    ['run.cmd', true],
    ['screen.scr', true],
  ])('isForbiddenAttachmentName(%j) is %s', (name, expected) => {
    expect(isForbiddenAttachmentName(name)).toBe(expected);
  });
});

describe('parseAddressList answers a bare ASCII address without the RFC 5322 parser, and as the parser would', () => {
  /** A small deterministic generator (xorshift), so a failure names an input that fails again. */
  function random(seed: number) {
    let state = seed;
    return (below: number) => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) % below;
    };
  }
  // Mostly what a bare address is made of, and some of everything the shortcut must leave to the parser.
  const pieces = [
    ...'abcxyzABZ0189',
    ...".-_+!#$%&'*/=?^`{|}~",
    '.',
    '..',
    '@',
    '@',
    'ann',
    'mail.example.com',
    'x.net',
    ' ',
    '"',
    '<',
    '>',
    ',',
    '(c)',
    '[1.2.3.4]',
    'é',
    '\\',
    ':',
    ';',
    '\n',
    '-',
    'a'.repeat(63),
    'b'.repeat(64),
  ];

  const ATEXT_AND_DOT = "abcXYZ09!#$%&'*+/=?^_`{|}~-..";
  const LABEL_AND_DOT = 'abcXYZ09--.';
  const word = (next: (below: number) => number, alphabet: string) =>
    Array.from({ length: 1 + next(10) }, () => alphabet[next(alphabet.length)]).join('');

  // 5,000 inputs: 1,250 of each of the four shapes below, enough for every piece to meet every other in the mixed
  // shapes and for hundreds of bare addresses to go through the shortcut. (20,000 took 9 s on a loaded machine and
  // proved nothing more.)
  it('gives the same answer as the parser for 5,000 generated inputs, many of them bare addresses', () => {
    const next = random(20_261_128);
    let plain = 0;
    for (let n = 0; n < 5_000; n++) {
      const length = 1 + next(12);
      let input = '';
      for (let i = 0; i < length; i++) input += pieces[next(pieces.length)];
      // A quarter shaped as local@domain.tld from a bare address's characters (dots and hyphens anywhere, so some
      // are not one), and a quarter as local@domain.tld around anything.
      if (n % 4 === 0) input = `${word(next, ATEXT_AND_DOT)}@${word(next, LABEL_AND_DOT)}.${word(next, LABEL_AND_DOT)}`;
      else if (n % 4 === 1) input = `${input.replace(/@/g, '')}@${pieces[next(pieces.length)]}mail.example.com`;
      const answer = parseAddressList(input);
      expect(answer, JSON.stringify(input)).toEqual(parseAddressListByRfc5322(input));
      if (answer.ok && answer.value.length === 1 && answer.value[0]!.email === input) plain++;
    }
    // The comparison covered the shortcut's answers, not only refusals.
    expect(plain).toBeGreaterThan(250);
  });

  it.each([
    ['r42@bench.example.net'],
    ['first.last+tag@sub.x.example'],
    ["o'brien@x.example"],
    ['UPPER@X.EXAMPLE'],
    [`${'l'.repeat(64)}@x.example`],
    [`${'l'.repeat(65)}@x.example`],
    [`a@${'d'.repeat(63)}.example`],
    [`a@${'d'.repeat(64)}.example`],
    [`a@${Array.from({ length: 60 }, () => 'abcd').join('.')}.example`],
    ['a@-x.example'],
    ['a@x-.example'],
    ['a@localhost'],
    ['.a@x.example'],
    ['a.@x.example'],
  ])('%s: the same answer either way', (input) => {
    expect(parseAddressList(input)).toEqual(parseAddressListByRfc5322(input));
  });
});
