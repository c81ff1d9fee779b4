import { describe, expect, it } from 'vitest';
import { parseFieldBlocks, stripComments } from '../../src/returns';
import { addressOfField, addressesInText, hostOfField, typedValue } from '../../src/returns/fields';

describe('parseFieldBlocks', () => {
  it('reads blocks separated by blank lines, names lowercased', () => {
    expect(
      parseFieldBlocks('Reporting-MTA: dns; a.example\n\nFinal-Recipient: rfc822; b@c.example\nACTION: failed\n'),
    ).toEqual([
      [{ name: 'reporting-mta', value: 'dns; a.example' }],
      [
        { name: 'final-recipient', value: 'rfc822; b@c.example' },
        { name: 'action', value: 'failed' },
      ],
    ]);
  });

  it('unfolds continued lines into one value', () => {
    const text =
      'Diagnostic-Code: smtp; 550-5.1.1 The email account\r\n  550-5.1.1 does not exist.\r\n\t550 5.1.1 gsmtp\r\n';
    expect(parseFieldBlocks(text)).toEqual([
      [
        {
          name: 'diagnostic-code',
          value: 'smtp; 550-5.1.1 The email account 550-5.1.1 does not exist. 550 5.1.1 gsmtp',
        },
      ],
    ]);
  });

  it('takes a line of only spaces for a blank line, and any line ending (CRLF, LF, CR)', () => {
    expect(parseFieldBlocks('A: 1\r\n   \rB: 2\n\n\n')).toEqual([
      [{ name: 'a', value: '1' }],
      [{ name: 'b', value: '2' }],
    ]);
  });

  it('skips lines that are not fields, and a continuation with no field before it', () => {
    expect(parseFieldBlocks('  stray continuation\nthis is noise\nStatus: 5.0.0\n')).toEqual([
      [{ name: 'status', value: '5.0.0' }],
    ]);
  });

  it('keeps an empty value, and white space before the colon', () => {
    expect(parseFieldBlocks('Remote-MTA:\nAction : failed')).toEqual([
      [
        { name: 'remote-mta', value: '' },
        { name: 'action', value: 'failed' },
      ],
    ]);
  });

  it('gives no block for an empty text', () => {
    expect(parseFieldBlocks('')).toEqual([]);
    expect(parseFieldBlocks('\n\n \n')).toEqual([]);
  });
});

describe('stripComments', () => {
  it.each([
    ['5.0.0 (permanent failure)', '5.0.0'],
    ['failed (bad (nested) comment)', 'failed'],
    ['dns; mx.example (192.0.2.1)', 'dns; mx.example'],
    ['"quoted (not a comment)" x', '"quoted (not a comment)" x'],
    ['a \\( escaped', 'a \\( escaped'],
    ['unclosed (comment', 'unclosed'],
    ['', ''],
  ])('%j → %j', (value, expected) => {
    expect(stripComments(value)).toBe(expected);
  });
});

describe('typed values and addresses', () => {
  it('splits a type off at the first semicolon when it is one word', () => {
    expect(typedValue('SMTP; 550 5.1.1 user; unknown')).toEqual({ type: 'smtp', value: '550 5.1.1 user; unknown' });
    expect(typedValue('X-Postfix; connect to mx: timed out')).toEqual({
      type: 'x-postfix',
      value: 'connect to mx: timed out',
    });
    expect(typedValue('550 5.1.10 RESOLVER.ADR.RecipientNotFound; not found')).toEqual({
      value: '550 5.1.10 RESOLVER.ADR.RecipientNotFound; not found',
    });
  });

  it.each([
    ['rfc822; bob@example.org', 'bob@example.org'],
    ['rfc822;bob@example.org', 'bob@example.org'],
    ['RFC822; <Bob@Example.org>', 'Bob@Example.org'],
    ['rfc822:wsnell@sdcc13.example.edu', 'wsnell@sdcc13.example.edu'],
    ['<bob@example.org>', 'bob@example.org'],
    ['bob@example.org (Bob)', 'bob@example.org'],
    ['utf-8; j\\x{F6}rg@example.de', 'jörg@example.de'],
    ['x400; /G=Bob/S=Smith/O=Example/', '/G=Bob/S=Smith/O=Example/'],
    ['rfc822; ', undefined],
    ['<>', undefined],
  ])('the address of %j is %j', (value, expected) => {
    expect(addressOfField(value)).toBe(expected);
  });

  it('reads the host of an MTA field', () => {
    expect(hostOfField('dns; mx.example.org (192.0.2.1)')).toBe('mx.example.org');
    expect(hostOfField('dns;')).toBeUndefined();
  });

  it('finds the addresses in a header value', () => {
    expect(addressesInText('"Bob B." <bob@example.org>, carol@example.org.')).toEqual([
      'bob@example.org',
      'carol@example.org',
    ]);
    expect(addressesInText('undisclosed-recipients:;')).toEqual([]);
  });
});
