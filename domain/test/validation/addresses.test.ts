import { describe, expect, it } from 'vitest';
import { addressDomain, isStrictBase64, isForbiddenAttachmentName, parseEmailAddress } from '../../src/validation';

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
