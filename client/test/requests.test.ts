import { describe, expect, it } from 'vitest';
import { Client, PRODUCTION_BASE_URL, SendlineError, STAGING_BASE_URL } from '../src';
import type { BatchResult, EmailMessage } from '../src';
import { BASE, fakeFetch, json } from './fake-fetch';

const KEY = 'sl_test_abc123';

const sendAnswer = {
  To: 'ann@example.org',
  SubmittedAt: '2030-01-02T03:04:05.678Z',
  MessageID: '0a129aee-e1cd-480d-b08d-4f48548ff48d',
  ErrorCode: 0,
  Message: 'OK',
};

function clientAnswering(body: unknown, status = 200) {
  const fake = fakeFetch(() => json(body, status));
  return { client: new Client(KEY, { baseUrl: BASE, fetch: fake.fetch }), requests: fake.requests };
}

describe('every request', () => {
  it('carries the key as a bearer token, asks for JSON and names the client', async () => {
    const { client, requests } = clientAnswering({ domains: [] });
    await client.domains.list();
    expect(requests).toHaveLength(1);
    const headers = requests[0]!.headers;
    expect(headers.Authorization).toBe(`Bearer ${KEY}`);
    expect(headers.Accept).toBe('application/json');
    expect(headers['User-Agent']).toMatch(/^sendline-typescript\/\d+\.\d+\.\d+$/);
  });

  it('sends Content-Type only with a body', async () => {
    const get = clientAnswering({ domains: [] });
    await get.client.domains.list();
    expect(get.requests[0]!.headers['Content-Type']).toBeUndefined();
    expect(get.requests[0]!.body).toBeUndefined();

    const post = clientAnswering(sendAnswer);
    await post.client.emails.send({ from: 'me@example.com', to: 'ann@example.org', textBody: 'Hi' });
    expect(post.requests[0]!.headers['Content-Type']).toBe('application/json');
  });

  it('goes to the production base address by default', async () => {
    const fake = fakeFetch(() => json({ domains: [] }));
    await new Client(KEY, { fetch: fake.fetch }).domains.list();
    expect(PRODUCTION_BASE_URL).toBe('https://api.sendline.dev/v1');
    expect(fake.requests[0]!.url).toBe('https://api.sendline.dev/v1/domains');
  });

  it('goes to staging when given the staging base address, trailing slash or not', async () => {
    const fake = fakeFetch(() => json({ domains: [] }));
    await new Client(KEY, { baseUrl: `${STAGING_BASE_URL}/`, fetch: fake.fetch }).domains.list();
    expect(STAGING_BASE_URL).toBe('https://api.staging.sendline.dev/v1');
    expect(fake.requests[0]!.url).toBe('https://api.staging.sendline.dev/v1/domains');
  });
});

describe('emails.send', () => {
  it('posts the message in the PascalCase wire format and maps the result', async () => {
    const { client, requests } = clientAnswering({ ...sendAnswer, To: 'ann@example.org, bob@example.net' });
    const result = await client.emails.send({
      from: 'Sender <me@example.com>',
      to: ['ann@example.org', 'bob@example.net'],
      subject: 'Your receipt',
      textBody: 'Thanks',
      htmlBody: '<p>Thanks</p>',
    });
    expect(requests[0]!.method).toBe('POST');
    expect(requests[0]!.url).toBe(`${BASE}/email`);
    expect(requests[0]!.body).toEqual({
      From: 'Sender <me@example.com>',
      To: 'ann@example.org, bob@example.net',
      Subject: 'Your receipt',
      TextBody: 'Thanks',
      HtmlBody: '<p>Thanks</p>',
    });
    expect(result).toEqual({
      to: 'ann@example.org, bob@example.net',
      submittedAt: '2030-01-02T03:04:05.678Z',
      messageId: '0a129aee-e1cd-480d-b08d-4f48548ff48d',
      errorCode: 0,
      message: 'OK',
    });
  });

  it('maps every optional field to its wire name', async () => {
    const { client, requests } = clientAnswering(sendAnswer);
    await client.emails.send({
      from: 'me@example.com',
      to: 'ann@example.org',
      cc: ['c1@example.org', 'c2@example.org'],
      bcc: 'b@example.org',
      replyTo: ['reply@example.com'],
      subject: 'S',
      textBody: 'T',
      tag: 'receipt',
      headers: { 'X-Priority': '1', 'X-Campaign': 'spring' },
      metadata: { orderId: '42' },
      trackOpens: true,
      trackLinks: 'HtmlOnly',
      messageStream: 'outbound',
      attachments: [{ filename: 'a.txt', content: 'SGVsbG8=', contentType: 'text/plain', contentId: 'cid-1' }],
    });
    expect(requests[0]!.body).toEqual({
      From: 'me@example.com',
      To: 'ann@example.org',
      Cc: 'c1@example.org, c2@example.org',
      Bcc: 'b@example.org',
      ReplyTo: 'reply@example.com',
      Subject: 'S',
      TextBody: 'T',
      Tag: 'receipt',
      Headers: [
        { Name: 'X-Priority', Value: '1' },
        { Name: 'X-Campaign', Value: 'spring' },
      ],
      Metadata: { orderId: '42' },
      TrackOpens: true,
      TrackLinks: 'HtmlOnly',
      MessageStream: 'outbound',
      Attachments: [{ Name: 'a.txt', Content: 'SGVsbG8=', ContentType: 'text/plain', ContentID: 'cid-1' }],
    });
  });

  it('takes headers as a list too, keeping repeated names', async () => {
    const { client, requests } = clientAnswering(sendAnswer);
    await client.emails.send({
      from: 'me@example.com',
      to: 'ann@example.org',
      textBody: 'T',
      headers: [
        { name: 'X-Tag', value: 'a' },
        { name: 'X-Tag', value: 'b' },
      ],
    });
    expect((requests[0]!.body as { Headers: unknown }).Headers).toEqual([
      { Name: 'X-Tag', Value: 'a' },
      { Name: 'X-Tag', Value: 'b' },
    ]);
  });

  it('base64-encodes attachment bytes given as Uint8Array or ArrayBuffer', async () => {
    const { client, requests } = clientAnswering(sendAnswer);
    const big = new Uint8Array(200_000).map((_, i) => (i * 7) % 256);
    await client.emails.send({
      from: 'me@example.com',
      to: 'ann@example.org',
      textBody: 'T',
      attachments: [
        { filename: 'hello.txt', content: new TextEncoder().encode('Hello, world'), contentType: 'text/plain' },
        {
          filename: 'bytes.bin',
          content: new Uint8Array([0, 255, 128]).buffer,
          contentType: 'application/octet-stream',
        },
        { filename: 'big.bin', content: big, contentType: 'application/octet-stream' },
      ],
    });
    const parts = (requests[0]!.body as { Attachments: { Name: string; Content: string }[] }).Attachments;
    expect(parts.map((p) => p.Name)).toEqual(['hello.txt', 'bytes.bin', 'big.bin']);
    expect(parts[0]!.Content).toBe('SGVsbG8sIHdvcmxk');
    expect(parts[1]!.Content).toBe('AP+A');
    expect(parts[2]!.Content).toBe(Buffer.from(big).toString('base64'));
    expect(parts[0]).not.toHaveProperty('ContentID');
  });

  it('encodes a view onto part of a buffer, not the whole buffer', async () => {
    const { client, requests } = clientAnswering(sendAnswer);
    const view = new Uint8Array([1, 2, 3, 72, 105, 9]).subarray(3, 5); // "Hi"
    await client.emails.send({
      from: 'me@example.com',
      to: 'ann@example.org',
      textBody: 'T',
      attachments: [{ filename: 'hi.txt', content: view, contentType: 'text/plain' }],
    });
    expect((requests[0]!.body as { Attachments: { Content: string }[] }).Attachments[0]!.Content).toBe('SGk=');
  });

  it('sends the idempotency key as the Idempotency-Key header, and a fresh one per call without one', async () => {
    const { client, requests } = clientAnswering(sendAnswer);
    const message: EmailMessage = { from: 'me@example.com', to: 'ann@example.org', textBody: 'T' };
    await client.emails.send(message, { idempotencyKey: 'order-42-receipt' });
    await client.emails.send(message);
    await client.emails.send(message);
    expect(requests[0]!.headers['Idempotency-Key']).toBe('order-42-receipt');
    const made = [requests[1]!.headers['Idempotency-Key'], requests[2]!.headers['Idempotency-Key']];
    expect(made[0]).toMatch(/^[0-9a-f-]{32,36}$/);
    expect(made[1]).toMatch(/^[0-9a-f-]{32,36}$/);
    expect(made[0]).not.toBe(made[1]);
  });

  it('names the Idempotency-Key it sent in the error of a failed send or batch, so a retry can reuse it', async () => {
    const { client, requests } = clientAnswering({ ErrorCode: 503, Message: 'Try again later.' }, 503);
    const message: EmailMessage = { from: 'me@example.com', to: 'ann@example.org', textBody: 'T' };
    const failed = await client.emails.send(message).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(SendlineError);
    expect((failed as SendlineError).idempotencyKey).toBe(requests[0]!.headers['Idempotency-Key']);
    const given = await client.emails.sendBatch([message], { idempotencyKey: 'k-1' }).catch((error: unknown) => error);
    expect((given as SendlineError).idempotencyKey).toBe('k-1');
    const read = await client.emails.list().catch((error: unknown) => error);
    expect((read as SendlineError).idempotencyKey).toBeNull();
  });

  it('returns cc and bcc when the API echoes them, and the partial-suppression message as is', async () => {
    const { client } = clientAnswering({
      ...sendAnswer,
      Cc: 'c@example.org',
      Bcc: 'b@example.org',
      Message: 'OK. Not sent to suppressed recipients: gone@example.org.',
    });
    const result = await client.emails.send({ from: 'me@example.com', to: 'ann@example.org', textBody: 'T' });
    expect(result.cc).toBe('c@example.org');
    expect(result.bcc).toBe('b@example.org');
    expect(result.message).toBe('OK. Not sent to suppressed recipients: gone@example.org.');
  });
});

describe('emails.sendBatch', () => {
  const messages: EmailMessage[] = [
    { from: 'me@example.com', to: 'ann@example.org', subject: 'One', textBody: '1' },
    { from: 'me@example.com', to: ['gone@example.org'], subject: 'Two', textBody: '2' },
    { from: 'me@example.com', to: 'cy@example.org', subject: 'Three', htmlBody: '<b>3</b>', tag: 't' },
  ];
  const answer = [
    { ...sendAnswer, MessageID: 'id-1' },
    {
      ErrorCode: 406,
      Message:
        'You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: gone@example.org. Inactive recipients are ones that have generated a hard bounce, a spam complaint, or a manual suppression.',
    },
    { ...sendAnswer, To: 'cy@example.org', MessageID: 'id-3', Message: 'Test job accepted' },
  ];

  it('posts a JSON array of wire messages to /email/batch with the idempotency key', async () => {
    const { client, requests } = clientAnswering(answer);
    await client.emails.sendBatch(messages, { idempotencyKey: 'batch-7' });
    expect(requests[0]!.method).toBe('POST');
    expect(requests[0]!.url).toBe(`${BASE}/email/batch`);
    expect(requests[0]!.headers['Idempotency-Key']).toBe('batch-7');
    expect(requests[0]!.body).toEqual([
      { From: 'me@example.com', To: 'ann@example.org', Subject: 'One', TextBody: '1' },
      { From: 'me@example.com', To: 'gone@example.org', Subject: 'Two', TextBody: '2' },
      { From: 'me@example.com', To: 'cy@example.org', Subject: 'Three', HtmlBody: '<b>3</b>', Tag: 't' },
    ]);
  });

  it('returns results in order; a refused entry is ok: false and does not throw', async () => {
    const { client } = clientAnswering(answer);
    const results: BatchResult[] = await client.emails.sendBatch(messages);
    expect(results).toEqual([
      { ok: true, messageId: 'id-1', submittedAt: sendAnswer.SubmittedAt, to: 'ann@example.org', message: 'OK' },
      { ok: false, errorCode: 406, message: answer[1]!.Message },
      {
        ok: true,
        messageId: 'id-3',
        submittedAt: sendAnswer.SubmittedAt,
        to: 'cy@example.org',
        message: 'Test job accepted',
      },
    ]);
  });

  it('fails with invalid_response when the API answers a different number of results', async () => {
    const { client } = clientAnswering([answer[0]]);
    await expect(client.emails.sendBatch(messages)).rejects.toMatchObject({
      code: 'invalid_response',
      status: 200,
    });
  });

  it('throws when the whole batch request is refused', async () => {
    const { client } = clientAnswering({ ErrorCode: 410, Message: 'Too many batch messages' }, 422);
    await expect(client.emails.sendBatch(messages)).rejects.toMatchObject({
      code: 'http_error',
      status: 422,
      errorCode: 410,
      message: 'Too many batch messages',
    });
  });
});

const listedMessage = {
  MessageID: 'id-1',
  Tag: 'receipt',
  To: [{ Email: 'ann@example.org', Name: 'Ann' }],
  Cc: [],
  Bcc: [{ Email: 'b@example.org', Name: null }],
  Recipients: ['ann@example.org', 'b@example.org'],
  ReceivedAt: '2030-01-02T03:04:05.678Z',
  From: '"Sender" <me@example.com>',
  Subject: 'Your receipt',
  Attachments: ['receipt.pdf'],
  Status: 'Sent',
  TrackOpens: false,
  TrackLinks: 'None',
  Metadata: { orderId: '42', Customer_ID: 'c-7' },
  MessageStream: 'outbound',
  Sandboxed: false,
};

const mappedMessage = {
  messageId: 'id-1',
  tag: 'receipt',
  to: [{ email: 'ann@example.org', name: 'Ann' }],
  cc: [],
  bcc: [{ email: 'b@example.org', name: null }],
  recipients: ['ann@example.org', 'b@example.org'],
  receivedAt: '2030-01-02T03:04:05.678Z',
  from: '"Sender" <me@example.com>',
  subject: 'Your receipt',
  attachments: ['receipt.pdf'],
  status: 'Sent',
  trackOpens: false,
  trackLinks: 'None',
  metadata: { orderId: '42', Customer_ID: 'c-7' },
  messageStream: 'outbound',
  sandboxed: false,
};

describe('emails.list', () => {
  it('asks for the first 100 messages by default', async () => {
    const { client, requests } = clientAnswering({ TotalCount: 0, Messages: [] });
    await client.emails.list();
    expect(requests[0]!.method).toBe('GET');
    expect(requests[0]!.url).toBe(`${BASE}/messages/outbound?count=100&offset=0`);
  });

  it('turns every filter into its query parameter, URL-encoded', async () => {
    const { client, requests } = clientAnswering({ TotalCount: 0, Messages: [] });
    await client.emails.list({
      count: 10,
      offset: 20,
      recipient: 'ann+1@example.org',
      fromEmail: 'me@example.com',
      tag: 'receipt',
      status: 'sent',
      subject: 'Your receipt & more',
      messageStream: 'outbound',
    });
    const url = new URL(requests[0]!.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${BASE}/messages/outbound`);
    expect([...url.searchParams]).toEqual([
      ['count', '10'],
      ['offset', '20'],
      ['recipient', 'ann+1@example.org'],
      ['fromemail', 'me@example.com'],
      ['tag', 'receipt'],
      ['status', 'sent'],
      ['subject', 'Your receipt & more'],
      ['messagestream', 'outbound'],
    ]);
    expect(requests[0]!.url).toContain('recipient=ann%2B1%40example.org');
  });

  it('maps the list to camelCase, leaving metadata keys as they are', async () => {
    const { client } = clientAnswering({ TotalCount: 31, Messages: [listedMessage] });
    expect(await client.emails.list()).toEqual({ totalCount: 31, messages: [mappedMessage] });
  });

  it('fills the documented defaults for fields the API leaves out', async () => {
    const { client } = clientAnswering({
      TotalCount: 1,
      Messages: [
        {
          MessageID: 'id-2',
          To: [{ Email: 'ann@example.org' }],
          Recipients: ['ann@example.org'],
          ReceivedAt: '2030-01-02T03:04:05.678Z',
          From: 'me@example.com',
          Status: 'Queued',
        },
      ],
    });
    const { messages } = await client.emails.list();
    expect(messages[0]).toEqual({
      messageId: 'id-2',
      tag: null,
      to: [{ email: 'ann@example.org', name: null }],
      cc: [],
      bcc: [],
      recipients: ['ann@example.org'],
      receivedAt: '2030-01-02T03:04:05.678Z',
      from: 'me@example.com',
      subject: '',
      attachments: [],
      status: 'Queued',
      trackOpens: false,
      trackLinks: 'None',
      metadata: {},
      messageStream: 'outbound',
      sandboxed: false,
    });
  });

  it('names the bad field when a listed message has the wrong shape', async () => {
    const { client } = clientAnswering({ TotalCount: 1, Messages: [{ ...listedMessage, MessageID: 7 }] });
    const error = await client.emails.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SendlineError);
    expect(error).toMatchObject({ code: 'invalid_response', status: 200 });
    expect((error as SendlineError).message).toContain('Messages[0].MessageID');
  });
});

describe('emails.get', () => {
  it('fetches the details of one message, escaping the id, and maps bodies and events', async () => {
    const { client, requests } = clientAnswering({
      ...listedMessage,
      TextBody: 'Thanks',
      HtmlBody: '<p>Thanks</p>',
      Body: 'From: me@example.com\r\n\r\nThanks',
      MessageEvents: [
        { Recipient: 'ann@example.org', Type: 'Accepted', ReceivedAt: '2030-01-02T03:04:05.678Z', Details: {} },
        {
          Recipient: 'ann@example.org',
          Type: 'Delivered',
          ReceivedAt: '2030-01-02T03:04:07.000Z',
          Details: {
            DeliveryMessage: '250 2.0.0 OK',
            DestinationServer: 'mx.example.org',
            DestinationIP: '192.0.2.1',
          },
        },
        {
          Recipient: 'b@example.org',
          Type: 'Bounced',
          ReceivedAt: '2030-01-02T03:04:08.000Z',
          Details: { Summary: '550 5.1.1 No such user', BounceID: '77', Smtp: { ResponseCode: 550 } },
        },
      ],
    });
    const details = await client.emails.get('id 1/x');
    expect(requests[0]!.method).toBe('GET');
    expect(requests[0]!.url).toBe(`${BASE}/messages/outbound/id%201%2Fx/details`);
    expect(details).toEqual({
      ...mappedMessage,
      textBody: 'Thanks',
      htmlBody: '<p>Thanks</p>',
      body: 'From: me@example.com\r\n\r\nThanks',
      messageEvents: [
        { recipient: 'ann@example.org', type: 'Accepted', receivedAt: '2030-01-02T03:04:05.678Z', details: {} },
        {
          recipient: 'ann@example.org',
          type: 'Delivered',
          receivedAt: '2030-01-02T03:04:07.000Z',
          details: { deliveryMessage: '250 2.0.0 OK', destinationServer: 'mx.example.org', destinationIp: '192.0.2.1' },
        },
        {
          recipient: 'b@example.org',
          type: 'Bounced',
          receivedAt: '2030-01-02T03:04:08.000Z',
          details: { summary: '550 5.1.1 No such user', bounceId: '77', smtp: { responseCode: 550 } },
        },
      ],
    });
  });

  it('passes through a 404 for an unknown message as http_error with the ErrorCode', async () => {
    const { client } = clientAnswering({ ErrorCode: 701, Message: 'This message was not found.' }, 404);
    await expect(client.emails.get('nope')).rejects.toMatchObject({
      code: 'http_error',
      status: 404,
      errorCode: 701,
      message: 'This message was not found.',
    });
  });
});

describe('suppressions', () => {
  const dump = {
    Suppressions: [
      {
        EmailAddress: 'gone@example.org',
        SuppressionReason: 'HardBounce',
        Origin: 'Recipient',
        CreatedAt: '2030-01-01T00:00:00.000Z',
      },
      {
        EmailAddress: 'quiet@example.org',
        SuppressionReason: 'ManualSuppression',
        Origin: 'Admin',
        CreatedAt: '2030-01-01T00:00:01.000Z',
      },
    ],
  };
  const mapped = [
    {
      emailAddress: 'gone@example.org',
      suppressionReason: 'HardBounce',
      origin: 'Recipient',
      createdAt: '2030-01-01T00:00:00.000Z',
    },
    {
      emailAddress: 'quiet@example.org',
      suppressionReason: 'ManualSuppression',
      origin: 'Admin',
      createdAt: '2030-01-01T00:00:01.000Z',
    },
  ];

  it('list reads the dump of the outbound stream', async () => {
    const { client, requests } = clientAnswering(dump);
    expect(await client.suppressions.list()).toEqual(mapped);
    expect(requests[0]!.method).toBe('GET');
    expect(requests[0]!.url).toBe(`${BASE}/message-streams/outbound/suppressions/dump`);
  });

  it('list accepts a bare array as the dump too', async () => {
    const { client } = clientAnswering(dump.Suppressions);
    expect(await client.suppressions.list()).toEqual(mapped);
  });

  it('delete posts every address and returns per-address results, failures included', async () => {
    const { client, requests } = clientAnswering({
      Suppressions: [
        { EmailAddress: 'gone@example.org', Status: 'Deleted', Message: null },
        { EmailAddress: 'not-an-address', Status: 'Failed', Message: 'Invalid email address.' },
      ],
    });
    const results = await client.suppressions.delete(['gone@example.org', 'not-an-address']);
    expect(requests[0]!.method).toBe('POST');
    expect(requests[0]!.url).toBe(`${BASE}/message-streams/outbound/suppressions/delete`);
    expect(requests[0]!.body).toEqual({
      Suppressions: [{ EmailAddress: 'gone@example.org' }, { EmailAddress: 'not-an-address' }],
    });
    expect(results).toEqual([
      { emailAddress: 'gone@example.org', status: 'Deleted', message: null },
      { emailAddress: 'not-an-address', status: 'Failed', message: 'Invalid email address.' },
    ]);
  });

  it('delete takes a single address as a string', async () => {
    const { client, requests } = clientAnswering({
      Suppressions: [{ EmailAddress: 'gone@example.org', Status: 'Deleted', Message: null }],
    });
    await client.suppressions.delete('gone@example.org');
    expect(requests[0]!.body).toEqual({ Suppressions: [{ EmailAddress: 'gone@example.org' }] });
  });

  it('delete refuses a status other than Deleted or Failed as invalid_response', async () => {
    const { client } = clientAnswering({
      Suppressions: [{ EmailAddress: 'gone@example.org', Status: 'Maybe', Message: null }],
    });
    await expect(client.suppressions.delete('gone@example.org')).rejects.toMatchObject({ code: 'invalid_response' });
  });
});

describe('account endpoints (camelCase JSON)', () => {
  it('me() returns the organization and the key', async () => {
    const me = {
      organization: { id: 'org_1', name: 'Acme' },
      key: { id: 'key_1', name: 'CI', mode: 'test', scopes: ['email:send', 'email:read'], prefix: 'sl_test_ab' },
    };
    const { client, requests } = clientAnswering(me);
    expect(await client.me()).toEqual(me);
    expect(requests[0]!.method).toBe('GET');
    expect(requests[0]!.url).toBe(`${BASE}/me`);
  });

  it('me() refuses an unknown key mode as invalid_response', async () => {
    const { client } = clientAnswering({
      organization: { id: 'org_1', name: 'Acme' },
      key: { id: 'key_1', name: 'CI', mode: 'sandbox', scopes: [], prefix: 'x' },
    });
    await expect(client.me()).rejects.toMatchObject({ code: 'invalid_response', status: 200 });
  });

  it('domains.list() returns the domains array with DNS records', async () => {
    const domains = [
      {
        name: 'example.com',
        verified: true,
        verifiedAt: '2030-01-01T00:00:00.000Z',
        dnsRecords: [
          {
            type: 'TXT',
            name: '_sendline.example.com',
            value: 'sendline-verify=abc',
            purpose: 'ownership',
            state: 'ok',
          },
          { type: 'MX', name: 'example.com', value: '10 mx.sendline.dev', purpose: 'mx', state: 'ok' },
        ],
      },
      { name: 'example.net', verified: false, verifiedAt: null, dnsRecords: [] },
    ];
    const { client, requests } = clientAnswering({ domains });
    expect(await client.domains.list()).toEqual(domains);
    expect(requests[0]!.url).toBe(`${BASE}/domains`);
  });

  it('members.list() returns the members array', async () => {
    const members = [
      { email: 'admin@example.com', role: 'admin', addedAt: '2030-01-01T00:00:00.000Z' },
      { email: 'dev@example.com', role: 'member', addedAt: '2030-01-02T00:00:00.000Z' },
    ];
    const { client, requests } = clientAnswering({ members });
    expect(await client.members.list()).toEqual(members);
    expect(requests[0]!.method).toBe('GET');
    expect(requests[0]!.url).toBe(`${BASE}/members`);
  });

  it('a body without the expected top-level array is invalid_response', async () => {
    const { client } = clientAnswering({ items: [] });
    await expect(client.members.list()).rejects.toMatchObject({ code: 'invalid_response', status: 200 });
  });
});
