import { describe, expect, it } from 'vitest';
import {
  isStrictBase64,
  MAX_MESSAGE_SIZE_BYTES,
  unwrapBase64,
  validateSendRequest,
  type OutboundMessage,
} from '../../src/validation';

/**
 * What Postmark takes that a strict reading of its fields would refuse, as the frameworks' mail backends send it
 * (docs/api.md, "What the send request takes"): wrapped base64 from MIME encoders, a trailing comma in an address
 * list, numbers as Metadata values, empty Headers arrays, ReplyTo lists, header names in any case.
 */

const minimal = {
  From: 'sender@shop.example',
  To: 'alice@customer.example',
  Subject: 'Hello',
  TextBody: 'Hi Alice',
};

function accept(body: unknown): OutboundMessage {
  const result = validateSendRequest(body);
  if (!result.ok) throw new Error(`expected a valid request, got ${result.error.code}: ${result.error.message}`);
  return result.message;
}

function refusal(body: unknown): { code: string; field?: string; message: string } {
  const result = validateSendRequest(body);
  if (result.ok) throw new Error('expected the request to be refused');
  return result.error;
}

// 60 bytes: as Python's email package writes them, wrapped at 76 characters with a newline at the end.
const bytes = Buffer.from(Array.from({ length: 60 }, (_, i) => i * 4));
const strict = bytes.toString('base64');
const pythonWrapped = `${strict.slice(0, 76)}\n${strict.slice(76)}\n`;

describe('attachment base64', () => {
  it.each([
    ['unwrapped, strict', strict],
    ['wrapped with LF and a final LF (Python email)', pythonWrapped],
    ['wrapped with CRLF (RFC 2045)', `${strict.slice(0, 76)}\r\n${strict.slice(76)}\r\n`],
    ['wrapped with lone CRs', `${strict.slice(0, 40)}\r${strict.slice(40)}`],
    ['wrapped every 4 characters', strict.replace(/(.{4})/g, '$1\n')],
    ['surrounded by blanks', `  \n${strict}\t \r\n`],
    ['with blanks around each line', ` ${strict.slice(0, 76)} \r\n\t${strict.slice(76)}`],
    ['with an empty line between lines', `${strict.slice(0, 76)}\n\n${strict.slice(76)}`],
  ])('takes base64 %s as the same bytes', (_, content) => {
    expect(unwrapBase64(content)).toBe(strict);
    const message = accept({
      ...minimal,
      TextBody: 'x',
      Subject: '',
      Attachments: [{ Name: 'table.bin.pdf', Content: content, ContentType: 'application/pdf' }],
    });
    // The message keeps the strict text, and its size counts the decoded bytes, not the wrapped text.
    expect(message.attachments[0]?.content).toBe(strict);
    expect(isStrictBase64(message.attachments[0]?.content ?? '')).toBe(true);
    expect(message.sizeBytes).toBe(1 + bytes.length);
  });

  it.each([
    ['a space inside a line', `${strict.slice(0, 20)} ${strict.slice(20)}`],
    ['missing padding', 'aGk'],
    ['missing padding on a wrapped last line', `${strict.slice(0, 76)}\naGk\n`],
    ['padding before the last line', `aGk=\n${strict}`],
    ['padding in the middle', 'aG=k'],
    ['too much padding', 'aGk=='],
    ['URL-safe characters', '-_8='],
    ['stray bits before the padding', 'aGl='],
    ['a character outside the alphabet', 'aGk*'],
    ['a data: URL', `data:application/pdf;base64,${strict}`],
    ['a backslash-n written out', `${strict.slice(0, 76)}\\n${strict.slice(76)}`],
    ['a vertical tab', `${strict.slice(0, 76)}\v${strict.slice(76)}`],
  ])('refuses base64 with %s, with the same message', (_, content) => {
    expect(unwrapBase64(content)).toBeUndefined();
    expect(
      refusal({ ...minimal, Attachments: [{ Name: 'a.pdf', Content: content, ContentType: 'application/pdf' }] }),
    ).toEqual({
      code: 'InvalidEmailRequest',
      field: 'Attachments[0].Content',
      message:
        'Attachments[0].Content is not valid base64 (standard alphabet, padded; lines may be broken by CRLF or LF)',
    });
  });

  it('refuses content of blanks and line breaks only as missing content', () => {
    expect(
      refusal({ ...minimal, Attachments: [{ Name: 'a.pdf', Content: ' \r\n', ContentType: 'application/pdf' }] }),
    ).toMatchObject({ field: 'Attachments[0].Content', message: expect.stringContaining('Content is required') });
  });

  it('counts the decoded size of wrapped base64 against the 10 MB limit', () => {
    // Just over 10 MiB of zeros, wrapped at 76: the text is far larger than the bytes, the bytes are what count.
    const over = 'A'.repeat((Math.floor(MAX_MESSAGE_SIZE_BYTES / 3) + 2) * 4).replace(/(.{76})/g, '$1\r\n');
    expect(
      refusal({ ...minimal, Attachments: [{ Name: 'big.pdf', Content: over, ContentType: 'application/pdf' }] }).code,
    ).toBe('PayloadTooLarge');
    const under = 'A'.repeat(4 * 1000).replace(/(.{76})/g, '$1\r\n');
    const message = accept({
      ...minimal,
      Attachments: [{ Name: 'small.pdf', Content: under, ContentType: 'application/pdf' }],
    });
    expect(message.sizeBytes).toBe('Hello'.length + 'Hi Alice'.length + 3000);
  });
});

describe('address lists', () => {
  it.each([
    ['a trailing comma', 'a@x.example, b@x.example,', ['a@x.example', 'b@x.example']],
    ['a trailing comma and blank', 'a@x.example, ', ['a@x.example']],
    ['a leading comma', ', a@x.example', ['a@x.example']],
    ['a quoted name with a comma, then a trailing comma', '"Doe, Jo" <j@x.example>,', ['j@x.example']],
  ])('takes To with %s', (_, to, expected) => {
    expect(accept({ ...minimal, To: to }).to.map((mailbox) => mailbox.email)).toEqual(expected);
  });

  it('takes a trailing comma in each string of an array, and in Cc, Bcc and ReplyTo', () => {
    const message = accept({
      ...minimal,
      To: ['a@x.example,', 'b@x.example'],
      Cc: 'c@x.example,',
      Bcc: 'd@x.example,',
      ReplyTo: 'e@x.example,',
    });
    expect([message.to, message.cc, message.bcc, message.replyTo].flat().map((m) => m.email)).toEqual([
      'a@x.example',
      'b@x.example',
      'c@x.example',
      'd@x.example',
      'e@x.example',
    ]);
  });

  it('still requires a recipient: a To of commas only is no recipient', () => {
    expect(refusal({ ...minimal, To: ' , ' })).toMatchObject({
      field: 'To',
      message: expect.stringContaining('To is required'),
    });
  });

  it('still refuses an empty item between two addresses', () => {
    expect(refusal({ ...minimal, To: 'a@x.example,,b@x.example' }).field).toBe('To');
  });

  it('takes ReplyTo as a comma-separated list or an array, as Postmark does', () => {
    expect(accept({ ...minimal, ReplyTo: 'a@x.example, B <b@x.example>' }).replyTo).toEqual([
      { email: 'a@x.example' },
      { email: 'b@x.example', name: 'B' },
    ]);
    expect(accept({ ...minimal, ReplyTo: ['a@x.example', 'b@x.example'] }).replyTo).toHaveLength(2);
  });
});

describe('Metadata values', () => {
  it('keeps numbers and booleans as their text, as Postmark returns every value as a string', () => {
    expect(accept({ ...minimal, Metadata: { order: 42, ratio: 1.5, paid: true, note: 'x' } }).metadata).toEqual({
      order: '42',
      ratio: '1.5',
      paid: 'true',
      note: 'x',
    });
  });

  it('drops a null value, as a null field counts as absent', () => {
    expect(accept({ ...minimal, Metadata: { a: null, b: 'x' } }).metadata).toEqual({ b: 'x' });
  });

  it.each([
    ['an object', { n: 1 }],
    ['an array', ['x']],
  ])('refuses %s as a value', (_, value) => {
    expect(refusal({ ...minimal, Metadata: { a: value } })).toMatchObject({
      field: 'Metadata.a',
      message: expect.stringContaining('must be a string'),
    });
  });
});

describe('Headers', () => {
  it('takes an empty Headers array as no custom header', () => {
    expect(accept({ ...minimal, Headers: [] }).headers).toEqual([]);
  });

  it('keeps a header name in the case it was given', () => {
    expect(accept({ ...minimal, Headers: [{ Name: 'x-PM-custom', Value: '1' }] }).headers).toEqual([
      { name: 'x-PM-custom', value: '1' },
    ]);
  });

  it('refuses a header the service writes whatever the case of its name', () => {
    expect(refusal({ ...minimal, Headers: [{ Name: 'content-TYPE', Value: 'text/plain' }] }).field).toBe(
      'Headers[0].Name',
    );
  });

  it('takes an empty header value', () => {
    expect(accept({ ...minimal, Headers: [{ Name: 'X-Empty', Value: '' }] }).headers).toEqual([
      { name: 'X-Empty', value: '' },
    ]);
  });
});
