import { describe, expect, it } from 'vitest';
import {
  MAX_BATCH_MESSAGES,
  MAX_MESSAGE_SIZE_BYTES,
  parseAddressList,
  validateBatchSize,
  validateSendRequest,
  type AddressListParser,
  type OutboundMessage,
  type SendRequestError,
} from '../../src/validation';

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

function refuse(body: unknown): SendRequestError {
  const result = validateSendRequest(body);
  if (result.ok) throw new Error('expected the request to be refused');
  return result.error;
}

/** `size` bytes of zeros as base64. */
function base64Of(size: number): string {
  return 'A'.repeat(Math.floor(size / 3) * 4);
}

describe('validateSendRequest: valid requests', () => {
  it('turns the minimal request into a message with defaults', () => {
    expect(accept(minimal)).toEqual({
      from: { email: 'sender@shop.example' },
      to: [{ email: 'alice@customer.example' }],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: 'Hello',
      textBody: 'Hi Alice',
      headers: [],
      metadata: {},
      attachments: [],
      trackOpens: false,
      trackLinks: 'None',
      messageStream: 'outbound',
      sizeBytes: 'Hello'.length + 'Hi Alice'.length,
    });
  });

  it('maps every Postmark wire field', () => {
    const message = accept({
      From: 'Shop Billing <billing@shop.example>',
      To: 'alice@customer.example, "Doe, Bob" <bob@customer.example>',
      Cc: ['carol@customer.example'],
      Bcc: 'audit@shop.example',
      ReplyTo: 'Support <support@shop.example>',
      Subject: 'Your invoice',
      Tag: 'invoice',
      HtmlBody: '<p>Hi</p>',
      TextBody: 'Hi',
      Headers: [{ Name: 'X-Campaign', Value: 'january' }],
      Metadata: { customerId: 'c-42' },
      Attachments: [
        { Name: 'invoice.pdf', Content: 'JVBERi0xLjQ=', ContentType: 'application/pdf', ContentID: 'cid:inv' },
      ],
      TrackOpens: true,
      TrackLinks: 'HtmlAndText',
      MessageStream: 'outbound',
    });
    expect(message).toEqual({
      from: { email: 'billing@shop.example', name: 'Shop Billing' },
      to: [{ email: 'alice@customer.example' }, { email: 'bob@customer.example', name: 'Doe, Bob' }],
      cc: [{ email: 'carol@customer.example' }],
      bcc: [{ email: 'audit@shop.example' }],
      replyTo: [{ email: 'support@shop.example', name: 'Support' }],
      subject: 'Your invoice',
      tag: 'invoice',
      htmlBody: '<p>Hi</p>',
      textBody: 'Hi',
      headers: [{ name: 'X-Campaign', value: 'january' }],
      metadata: { customerId: 'c-42' },
      attachments: [
        { name: 'invoice.pdf', content: 'JVBERi0xLjQ=', contentType: 'application/pdf', contentId: 'cid:inv' },
      ],
      trackOpens: true,
      trackLinks: 'HtmlAndText',
      messageStream: 'outbound',
      sizeBytes: 12 + 9 + 2 + 'X-Campaign'.length + 'january'.length + 4 + 8,
    });
  });

  it('accepts To as an array of strings, each possibly a list', () => {
    expect(accept({ ...minimal, To: ['a@x.example, b@x.example', 'C <c@x.example>'] }).to).toEqual([
      { email: 'a@x.example' },
      { email: 'b@x.example' },
      { email: 'c@x.example', name: 'C' },
    ]);
  });

  it('treats null fields as absent, as some Postmark clients send them', () => {
    const message = accept({
      ...minimal,
      Cc: null,
      Bcc: null,
      ReplyTo: null,
      Tag: null,
      HtmlBody: null,
      Headers: null,
      Metadata: null,
      Attachments: null,
      TrackOpens: null,
      TrackLinks: null,
      MessageStream: null,
    });
    expect(message).toEqual(accept(minimal));
  });

  it('ignores fields it does not know', () => {
    expect(accept({ ...minimal, TemplateModel: { x: 1 }, InlineCss: true })).toEqual(accept(minimal));
  });

  it('accepts a request without a subject, as an empty subject', () => {
    const { Subject: _, ...withoutSubject } = minimal;
    expect(accept(withoutSubject).subject).toBe('');
  });

  it('accepts an HTML body alone', () => {
    const message = accept({ From: minimal.From, To: minimal.To, HtmlBody: '<b>hi</b>' });
    expect(message.htmlBody).toBe('<b>hi</b>');
    expect(message).not.toHaveProperty('textBody');
  });

  it('counts the size in UTF-8 bytes and decoded attachment bytes', () => {
    const message = accept({
      ...minimal,
      Subject: 'é',
      TextBody: '€😀',
      Attachments: [{ Name: 'a.bin.txt', Content: 'AAAA', ContentType: 'text/plain' }],
    });
    expect(message.sizeBytes).toBe(2 + 3 + 4 + 3);
  });

  it('accepts a message of exactly the size limit', () => {
    const content = base64Of(MAX_MESSAGE_SIZE_BYTES - 10);
    const attachmentBytes = (content.length / 4) * 3;
    const result = validateSendRequest({
      ...minimal,
      Subject: '',
      TextBody: 'x'.repeat(MAX_MESSAGE_SIZE_BYTES - attachmentBytes),
      Attachments: [{ Name: 'big.pdf', Content: content, ContentType: 'application/pdf' }],
    });
    expect(result.ok && result.message.sizeBytes).toBe(MAX_MESSAGE_SIZE_BYTES);
  });

  it('accepts 50 recipients in To, Cc and Bcc together', () => {
    const addresses = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}@x.example`);
    const message = accept({ ...minimal, To: addresses('t', 30), Cc: addresses('c', 10), Bcc: addresses('b', 10) });
    expect(message.to.length + message.cc.length + message.bcc.length).toBe(50);
  });

  it('accepts a content type with parameters', () => {
    const message = accept({
      ...minimal,
      Attachments: [{ Name: 'notes.txt', Content: 'aGk=', ContentType: 'text/plain; charset="utf-8"' }],
    });
    expect(message.attachments[0]?.contentType).toBe('text/plain; charset="utf-8"');
  });
});

describe('validateSendRequest: refused requests', () => {
  const recipients = (n: number) => Array.from({ length: n }, (_, i) => `r${i}@x.example`);
  const attachment = { Name: 'invoice.pdf', Content: 'JVBERi0xLjQ=', ContentType: 'application/pdf' };
  const cases: Array<[string, unknown, SendRequestError['code'], string | undefined, string]> = [
    ['a JSON array body', [minimal], 'IncompatibleJson', undefined, 'JSON object'],
    ['a string body', 'hello', 'IncompatibleJson', undefined, 'JSON object'],
    ['a null body', null, 'IncompatibleJson', undefined, 'JSON object'],
    [
      'another message stream',
      { ...minimal, MessageStream: 'broadcast' },
      'InvalidMessageStream',
      'MessageStream',
      'MessageStream',
    ],
    [
      'a non-string message stream',
      { ...minimal, MessageStream: 3 },
      'InvalidMessageStream',
      'MessageStream',
      'MessageStream',
    ],
    ['a missing From', { ...minimal, From: undefined }, 'InvalidEmailRequest', 'From', 'From is required'],
    ['an empty From', { ...minimal, From: '' }, 'InvalidEmailRequest', 'From', 'From is required'],
    ['a numeric From', { ...minimal, From: 5 }, 'InvalidEmailRequest', 'From', 'From must be a string'],
    ['an invalid From', { ...minimal, From: 'not an address' }, 'InvalidEmailRequest', 'From', 'From:'],
    [
      'two From addresses',
      { ...minimal, From: 'a@x.example, b@x.example' },
      'InvalidEmailRequest',
      'From',
      'exactly one',
    ],
    ['a missing To', { ...minimal, To: undefined }, 'InvalidEmailRequest', 'To', 'To is required'],
    ['an empty To list', { ...minimal, To: [] }, 'InvalidEmailRequest', 'To', 'To is required'],
    ['a numeric To', { ...minimal, To: 5 }, 'InvalidEmailRequest', 'To', 'To must be a string or an array'],
    [
      'an object To',
      { ...minimal, To: { Email: 'a@x.example' } },
      'InvalidEmailRequest',
      'To',
      'To must be a string or an array',
    ],
    [
      'a number inside To',
      { ...minimal, To: ['a@x.example', 7] },
      'InvalidEmailRequest',
      'To[1]',
      'To[1] must be a string',
    ],
    ['an invalid To', { ...minimal, To: 'alice' }, 'InvalidEmailRequest', 'To', 'To: "alice"'],
    ['a To without a dot in the domain', { ...minimal, To: 'alice@localhost' }, 'InvalidEmailRequest', 'To', 'To:'],
    [
      'a To with an address literal',
      { ...minimal, To: 'alice@[192.0.2.1]' },
      'InvalidEmailRequest',
      'To',
      'address literal',
    ],
    [
      'a To with a bad domain label',
      { ...minimal, To: 'alice@-x.example' },
      'InvalidEmailRequest',
      'To',
      'invalid domain',
    ],
    [
      'a To with a line break',
      { ...minimal, To: 'a@x.example\r\nBcc: b@x.example' },
      'InvalidEmailRequest',
      'To',
      'line break',
    ],
    ['a To group', { ...minimal, To: 'Team: a@x.example, b@x.example;' }, 'InvalidEmailRequest', 'To', 'group'],
    ['an empty item inside To', { ...minimal, To: 'a@x.example,,b@x.example' }, 'InvalidEmailRequest', 'To', 'To:'],
    [
      'an over-long local part',
      { ...minimal, To: `${'a'.repeat(65)}@x.example` },
      'InvalidEmailRequest',
      'To',
      'local part',
    ],
    [
      'an invalid Cc in an array',
      { ...minimal, Cc: ['ok@x.example', 'nope'] },
      'InvalidEmailRequest',
      'Cc[1]',
      'Cc[1]:',
    ],
    ['a numeric Bcc', { ...minimal, Bcc: true }, 'InvalidEmailRequest', 'Bcc', 'Bcc must be a string or an array'],
    ['an invalid ReplyTo', { ...minimal, ReplyTo: 'support' }, 'InvalidEmailRequest', 'ReplyTo', 'ReplyTo:'],
    [
      '51 recipients',
      { ...minimal, To: recipients(40), Cc: recipients(11) },
      'InvalidEmailRequest',
      'To',
      'at most 50 recipients',
    ],
    ['a numeric Subject', { ...minimal, Subject: 42 }, 'InvalidEmailRequest', 'Subject', 'Subject must be a string'],
    [
      'a Subject with a line break',
      { ...minimal, Subject: 'Hi\nBcc: x@y.example' },
      'InvalidEmailRequest',
      'Subject',
      'line breaks',
    ],
    [
      'a Subject of 2001 characters',
      { ...minimal, Subject: 's'.repeat(2001) },
      'InvalidEmailRequest',
      'Subject',
      'at most 2000',
    ],
    [
      'a Tag with a line break',
      { ...minimal, Tag: 'a\rb' },
      'InvalidEmailRequest',
      'Tag',
      'Tag must not contain line breaks',
    ],
    ['a Tag of 1001 characters', { ...minimal, Tag: 't'.repeat(1001) }, 'InvalidEmailRequest', 'Tag', 'at most 1000'],
    ['a numeric Tag', { ...minimal, Tag: 1 }, 'InvalidEmailRequest', 'Tag', 'Tag must be a string'],
    [
      'no body',
      { ...minimal, TextBody: undefined },
      'InvalidEmailRequest',
      'TextBody',
      'TextBody or HtmlBody is required',
    ],
    [
      'two empty bodies',
      { ...minimal, TextBody: '', HtmlBody: '' },
      'InvalidEmailRequest',
      'TextBody',
      'TextBody or HtmlBody',
    ],
    ['a numeric HtmlBody', { ...minimal, HtmlBody: 1 }, 'InvalidEmailRequest', 'HtmlBody', 'HtmlBody must be a string'],
    [
      'Headers as an object',
      { ...minimal, Headers: { 'X-A': 'b' } },
      'InvalidEmailRequest',
      'Headers',
      'Headers must be an array',
    ],
    [
      'a header that is a string',
      { ...minimal, Headers: ['X-A: b'] },
      'InvalidEmailRequest',
      'Headers[0]',
      'Headers[0] must be an object',
    ],
    [
      'a header without a name',
      { ...minimal, Headers: [{ Value: 'b' }] },
      'InvalidEmailRequest',
      'Headers[0].Name',
      'Headers[0].Name',
    ],
    [
      'a header name with a colon',
      { ...minimal, Headers: [{ Name: 'X:A', Value: 'b' }] },
      'InvalidEmailRequest',
      'Headers[0].Name',
      'not a valid header name',
    ],
    [
      'a header name with a space',
      { ...minimal, Headers: [{ Name: 'X A', Value: 'b' }] },
      'InvalidEmailRequest',
      'Headers[0].Name',
      'not a valid header name',
    ],
    [
      'a header name with non-ASCII',
      { ...minimal, Headers: [{ Name: 'X-Ä', Value: 'b' }] },
      'InvalidEmailRequest',
      'Headers[0].Name',
      'not a valid header name',
    ],
    [
      'a From header',
      { ...minimal, Headers: [{ Name: 'from', Value: 'ceo@bank.example' }] },
      'InvalidEmailRequest',
      'Headers[0].Name',
      'set by the service',
    ],
    [
      'a DKIM-Signature header',
      { ...minimal, Headers: [{ Name: 'DKIM-Signature', Value: 'v=1' }] },
      'InvalidEmailRequest',
      'Headers[0].Name',
      'DKIM-Signature',
    ],
    [
      'a Message-ID header',
      { ...minimal, Headers: [{ Name: 'Message-Id', Value: '<x@y>' }] },
      'InvalidEmailRequest',
      'Headers[0].Name',
      'set by the service',
    ],
    [
      'a header value with a line break',
      { ...minimal, Headers: [{ Name: 'X-A', Value: 'b\r\nBcc: x@y.example' }] },
      'InvalidEmailRequest',
      'Headers[0].Value',
      'line breaks',
    ],
    [
      'a numeric header value',
      { ...minimal, Headers: [{ Name: 'X-A', Value: 1 }] },
      'InvalidEmailRequest',
      'Headers[0].Value',
      'must be a string',
    ],
    [
      'a header without a value',
      { ...minimal, Headers: [{ Name: 'X-A' }] },
      'InvalidEmailRequest',
      'Headers[0].Value',
      'is required',
    ],
    [
      'Metadata as an array',
      { ...minimal, Metadata: ['a'] },
      'InvalidEmailRequest',
      'Metadata',
      'Metadata must be an object',
    ],
    [
      'an object Metadata value',
      { ...minimal, Metadata: { count: { n: 3 } } },
      'InvalidEmailRequest',
      'Metadata.count',
      'Metadata.count must be a string',
    ],
    [
      '11 Metadata fields',
      { ...minimal, Metadata: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'])) },
      'InvalidEmailRequest',
      'Metadata',
      'at most 10',
    ],
    [
      'a Metadata key of 21 characters',
      { ...minimal, Metadata: { ['k'.repeat(21)]: 'v' } },
      'InvalidEmailRequest',
      `Metadata.${'k'.repeat(21)}`,
      '1 to 20',
    ],
    ['an empty Metadata key', { ...minimal, Metadata: { '': 'v' } }, 'InvalidEmailRequest', 'Metadata.', '1 to 20'],
    [
      'a Metadata value of 81 characters',
      { ...minimal, Metadata: { k: 'v'.repeat(81) } },
      'InvalidEmailRequest',
      'Metadata.k',
      'at most 80',
    ],
    [
      'Attachments as an object',
      { ...minimal, Attachments: attachment },
      'InvalidEmailRequest',
      'Attachments',
      'Attachments must be an array',
    ],
    [
      'an attachment that is a string',
      { ...minimal, Attachments: ['x'] },
      'InvalidEmailRequest',
      'Attachments[0]',
      'must be an object',
    ],
    [
      'an attachment without a name',
      { ...minimal, Attachments: [{ ...attachment, Name: undefined }] },
      'InvalidEmailRequest',
      'Attachments[0].Name',
      'Name is required',
    ],
    [
      'an attachment name with a path',
      { ...minimal, Attachments: [{ ...attachment, Name: '../etc/passwd' }] },
      'InvalidEmailRequest',
      'Attachments[0].Name',
      'path separators',
    ],
    [
      'an attachment name with a backslash',
      { ...minimal, Attachments: [{ ...attachment, Name: 'C:\\x.pdf' }] },
      'InvalidEmailRequest',
      'Attachments[0].Name',
      'path separators',
    ],
    [
      'an attachment name with a line break',
      { ...minimal, Attachments: [{ ...attachment, Name: 'a\n.pdf' }] },
      'InvalidEmailRequest',
      'Attachments[0].Name',
      'line breaks',
    ],
    [
      'an .exe attachment',
      { ...minimal, Attachments: [{ ...attachment, Name: 'setup.EXE' }] },
      'ForbiddenAttachmentType',
      'Attachments[0].Name',
      '.exe are forbidden',
    ],
    [
      'a .js attachment',
      { ...minimal, Attachments: [attachment, { ...attachment, Name: 'app.js' }] },
      'ForbiddenAttachmentType',
      'Attachments[1].Name',
      '.js are forbidden',
    ],
    [
      'an .exe with trailing dots',
      { ...minimal, Attachments: [{ ...attachment, Name: 'invoice.pdf.exe. ' }] },
      'ForbiddenAttachmentType',
      'Attachments[0].Name',
      '.exe',
    ],
    [
      'an attachment without content',
      { ...minimal, Attachments: [{ ...attachment, Content: '' }] },
      'InvalidEmailRequest',
      'Attachments[0].Content',
      'Content is required',
    ],
    [
      'content that is not base64',
      { ...minimal, Attachments: [{ ...attachment, Content: 'not base64!' }] },
      'InvalidEmailRequest',
      'Attachments[0].Content',
      'not valid base64',
    ],
    [
      'base64 without padding',
      { ...minimal, Attachments: [{ ...attachment, Content: 'aGk' }] },
      'InvalidEmailRequest',
      'Attachments[0].Content',
      'not valid base64',
    ],
    [
      'base64 with a space inside a line',
      { ...minimal, Attachments: [{ ...attachment, Content: 'aGVs bG8=' }] },
      'InvalidEmailRequest',
      'Attachments[0].Content',
      'not valid base64',
    ],
    [
      'base64 with stray bits',
      { ...minimal, Attachments: [{ ...attachment, Content: 'aGl=' }] },
      'InvalidEmailRequest',
      'Attachments[0].Content',
      'not valid base64',
    ],
    [
      'URL-safe base64',
      { ...minimal, Attachments: [{ ...attachment, Content: '-_8=' }] },
      'InvalidEmailRequest',
      'Attachments[0].Content',
      'not valid base64',
    ],
    [
      'an attachment without a type',
      { ...minimal, Attachments: [{ ...attachment, ContentType: undefined }] },
      'InvalidEmailRequest',
      'Attachments[0].ContentType',
      'ContentType is required',
    ],
    [
      'an attachment type without subtype',
      { ...minimal, Attachments: [{ ...attachment, ContentType: 'pdf' }] },
      'InvalidEmailRequest',
      'Attachments[0].ContentType',
      'type/subtype',
    ],
    [
      'a content id with angle brackets',
      { ...minimal, Attachments: [{ ...attachment, ContentID: '<x>' }] },
      'InvalidEmailRequest',
      'Attachments[0].ContentID',
      'angle brackets',
    ],
    [
      'a numeric content id',
      { ...minimal, Attachments: [{ ...attachment, ContentID: 7 }] },
      'InvalidEmailRequest',
      'Attachments[0].ContentID',
      'must be a string',
    ],
    [
      'a string TrackOpens',
      { ...minimal, TrackOpens: 'true' },
      'InvalidEmailRequest',
      'TrackOpens',
      'TrackOpens must be true or false',
    ],
    [
      'an unknown TrackLinks',
      { ...minimal, TrackLinks: 'Always' },
      'InvalidEmailRequest',
      'TrackLinks',
      'TrackLinks must be one of',
    ],
    [
      'a message over 10 MB',
      { ...minimal, Attachments: [{ ...attachment, Content: base64Of(MAX_MESSAGE_SIZE_BYTES) }] },
      'PayloadTooLarge',
      undefined,
      'at most 10485760 bytes',
    ],
  ];

  it.each(cases)('refuses %s', (_, body, code, field, text) => {
    const error = refuse(body);
    expect(error.code).toBe(code);
    expect(error.field).toBe(field);
    expect(error.message).toContain(text);
  });
});

describe('validateSendRequest: the address list parser', () => {
  it('reads every address field with the parser it is given, which answers as parseAddressList', () => {
    // given a parser that records what it was asked and answers as the domain's own
    const asked: string[] = [];
    const parser: AddressListParser = (input) => {
      asked.push(input);
      return parseAddressList(input);
    };
    const body = { ...minimal, Cc: 'carol@customer.example', Bcc: ['dan@customer.example'], ReplyTo: 'r@shop.example' };
    // when a request is validated with it
    const result = validateSendRequest(body, parser);
    // then every address field went through it, and the message is the one the default parser gives
    expect(asked).toEqual([
      'sender@shop.example',
      'alice@customer.example',
      'carol@customer.example',
      'dan@customer.example',
      'r@shop.example',
    ]);
    expect(result).toEqual(validateSendRequest(body));
  });

  it('refuses with the reason the parser gives', () => {
    const refusing: AddressListParser = () => ({ ok: false, reason: 'is refused by this parser' });
    const result = validateSendRequest(minimal, refusing);
    expect(result).toMatchObject({
      ok: false,
      error: { code: 'InvalidEmailRequest', message: 'From: is refused by this parser' },
    });
  });
});

describe('validateBatchSize', () => {
  it('accepts 500 messages', () => {
    expect(validateBatchSize(MAX_BATCH_MESSAGES)).toEqual({ ok: true });
  });

  it('refuses 501 messages with TooManyBatchMessages', () => {
    const result = validateBatchSize(501);
    expect(result).toMatchObject({ ok: false, error: { code: 'TooManyBatchMessages' } });
  });
});
