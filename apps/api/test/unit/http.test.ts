import { randomBytes } from 'node:crypto';
import type { MessageEvent, Scope, SuppressionEvent } from '@sendline/domain';
import { hashApiKey, type StoredApiKey } from '@sendline/infra';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/app';
import type { Api, ApiDependencies } from '../../src/context';

/**
 * How the API maps HTTP onto the send path and the suppressions, and how it answers what it refuses: the app built
 * on stand-ins for its services (no server, no Kafka, no Redis), each recording what reached it.
 */
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const keys = new Map<string, StoredApiKey>();
let issued = 0;
function issue(scopes: Scope[], options: { revoked?: boolean } = {}): string {
  const token = `sl_live_${randomBytes(32).toString('base64url')}`;
  keys.set(hashApiKey(token), {
    keyId: `key-${++issued}`,
    organizationId: 'org-1',
    name: 'unit',
    mode: 'live',
    scopes,
    revoked: options.revoked ?? false,
    prefix: token.slice(0, 12),
  });
  return token;
}

let appended: (MessageEvent | SuppressionEvent)[][] = [];
let applied: SuppressionEvent[][] = [];
let claims: unknown[][] = [];
let completed: unknown[][] = [];
let ids = 0;
const deps = {
  accounts: {
    apiKeyByHash: async (hash: string) => keys.get(hash) ?? null,
    organization: async () => ({ id: 'org-1', name: 'Unit', createdAt: 0, messagesPerMonth: null }),
    domain: async (_org: string, name: string) =>
      name === 'example.com' ? { verified: true } : name === 'pending.example' ? { verified: false } : null,
  },
  suppressions: {
    suppressedAmongMany: async (_org: string, lists: string[][]) =>
      lists.map((list) => new Set(list.filter((address) => address === 'gone@example.org'))),
    list: async () => [],
    apply: async (events: SuppressionEvent[]) => {
      applied.push(events);
    },
  },
  allowance: { reserve: async () => true, used: async () => 0 },
  idempotency: {
    claim: async (...args: unknown[]) => {
      claims.push(args);
      return { kind: 'new', submittedAt: NOW - 1000 };
    },
    complete: async (...args: unknown[]) => {
      completed.push(args);
    },
  },
  activity: { list: async () => ({ total: 0, messages: [] }), details: async () => null },
  store: {
    append: async (events: (MessageEvent | SuppressionEvent)[]) => {
      appended.push(events);
    },
  },
  now: () => NOW,
  newId: () => `id-${++ids}`,
  mailHost: 'mail.sendline.test',
} as unknown as ApiDependencies;

let app: Api;
let sender: string;
let reader: string;
beforeAll(async () => {
  app = await buildApi(deps);
  sender = issue(['email:send']);
  reader = issue(['email:read']);
});
afterAll(async () => {
  await app?.close();
});
beforeEach(() => {
  appended = [];
  applied = [];
  claims = [];
  completed = [];
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const message = (fields: Record<string, unknown> = {}) => ({
  From: 'Sender <sender@example.com>',
  To: 'a@example.org, B <b@example.org>',
  Subject: 'Hello',
  TextBody: 'Hi',
  ...fields,
});

function post(url: string, payload: unknown, headers: Record<string, string> = bearer(sender)) {
  return app.inject({ method: 'POST', url, headers, payload: payload as object });
}

describe('POST /v1/email', () => {
  it('answers Postmark’s send result and appends the message’s MessageAccepted', async () => {
    const response = await post('/v1/email', message({ Cc: 'c@example.org' }));
    expect(response.statusCode).toBe(200);
    const result = response.json();
    expect(result).toEqual({
      To: 'a@example.org, b@example.org',
      Cc: 'c@example.org',
      SubmittedAt: new Date(NOW).toISOString(),
      MessageID: expect.any(String),
      ErrorCode: 0,
      Message: 'OK',
    });
    expect(appended).toHaveLength(1);
    const [accepted] = appended[0] as MessageEvent[];
    expect(accepted?.type).toBe('MessageAccepted');
    expect(accepted?.metadata.organizationId).toBe('org-1');
    expect(accepted?.type === 'MessageAccepted' && accepted.data.messageId).toBe(result.MessageID);
  });

  it('takes the key from X-Postmark-Server-Token as well', async () => {
    const response = await post('/v1/email', message(), { 'x-postmark-server-token': sender });
    expect(response.statusCode).toBe(200);
    expect(response.json().ErrorCode).toBe(0);
  });

  it('names the suppressed recipients it leaves out', async () => {
    const response = await post('/v1/email', message({ To: 'a@example.org, gone@example.org' }));
    expect(response.json().Message).toBe('OK. Not sent to suppressed recipients: gone@example.org.');
  });

  it('runs under the Idempotency-Key: claimed with the request’s hash, the answer stored', async () => {
    const response = await post('/v1/email', message(), { ...bearer(sender), 'idempotency-key': 'k-1' });
    expect(response.statusCode).toBe(200);
    expect(claims).toEqual([['org-1', 'k-1', expect.stringMatching(/^[0-9a-f]{64}$/), NOW]]);
    // The time of the first claim, not the clock's.
    expect(response.json().SubmittedAt).toBe(new Date(NOW - 1000).toISOString());
    expect(completed).toHaveLength(1);
    expect(completed[0]?.[4]).toEqual({ status: 200, body: response.json() });
  });

  it('refuses an Idempotency-Key longer than 255 characters (422, ErrorCode 300)', async () => {
    const response = await post('/v1/email', message(), { ...bearer(sender), 'idempotency-key': 'k'.repeat(256) });
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(300);
    expect(claims).toEqual([]);
  });

  it.each([
    ['malformed JSON', '{"From": '],
    ['an empty body', ''],
  ])('answers %s with 422, ErrorCode 402', async (_what, payload) => {
    const response = await app.inject({
      method: 'POST',
      url: '/v1/email',
      headers: { ...bearer(sender), 'content-type': 'application/json' },
      payload,
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ ErrorCode: 402, Message: expect.any(String) });
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded'])(
    'answers a body sent as %s with 415, ErrorCode 409',
    async (type) => {
      const response = await app.inject({
        method: 'POST',
        url: '/v1/email',
        headers: { ...bearer(sender), 'content-type': type },
        payload: JSON.stringify(message()),
      });
      expect(response.statusCode).toBe(415);
      expect(response.json().ErrorCode).toBe(409);
      expect(appended).toEqual([]);
    },
  );

  it('answers a field of the wrong JSON type with 422, ErrorCode 300, naming the field', async () => {
    const response = await post('/v1/email', message({ Subject: 5 }));
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(300);
    expect(response.json().Message).toContain('Subject');
  });

  it('takes what Postmark takes and a framework sends: wrapped base64, numbers in Metadata, a trailing comma', async () => {
    const pdf = Buffer.from(Array.from({ length: 200 }, (_, i) => i)).toString('base64');
    const response = await post(
      '/v1/email',
      message({
        To: 'a@example.org,',
        Metadata: { order: 42, paid: true },
        Headers: [],
        Attachments: [
          { Name: 'a.pdf', Content: `${pdf.replace(/(.{76})/g, '$1\n')}\n`, ContentType: 'application/pdf' },
        ],
      }),
    );
    expect(response.statusCode).toBe(200);
    const [accepted] = appended[0] as MessageEvent[];
    const data = accepted?.type === 'MessageAccepted' ? accepted.data : undefined;
    expect(data?.metadata).toEqual({ order: '42', paid: 'true' });
    expect(data?.attachments[0]?.content).toBe(pdf);
    expect(data?.to).toEqual([{ email: 'a@example.org' }]);
  });

  it('answers a message stream other than outbound with 422, ErrorCode 1235, and appends nothing', async () => {
    const response = await post('/v1/email', message({ MessageStream: 'broadcast' }));
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(1235);
    expect(appended).toEqual([]);
  });

  it('answers a From on an unknown or unverified domain with ErrorCode 400 and 401', async () => {
    const unknown = await post('/v1/email', message({ From: 'x@elsewhere.example' }));
    expect([unknown.statusCode, unknown.json().ErrorCode]).toEqual([422, 400]);
    const pending = await post('/v1/email', message({ From: 'x@pending.example' }));
    expect([pending.statusCode, pending.json().ErrorCode]).toEqual([422, 401]);
    expect(appended).toEqual([]);
  });
});

describe('POST /v1/email/batch', () => {
  it('answers one result per message, in order, and appends the accepted ones in one append', async () => {
    const response = await post('/v1/email/batch', [
      message(),
      message({ MessageStream: 'broadcast' }),
      'not a message',
      message(),
    ]);
    expect(response.statusCode).toBe(200);
    expect(response.json().map((result: { ErrorCode: number }) => result.ErrorCode)).toEqual([0, 1235, 403, 0]);
    expect(appended).toHaveLength(1);
    expect(appended[0]?.map((event) => event.type)).toEqual(['MessageAccepted', 'MessageAccepted']);
  });

  it('refuses more than 500 messages with 422, ErrorCode 410, before sending any', async () => {
    const response = await post(
      '/v1/email/batch',
      Array.from({ length: 501 }, () => message()),
    );
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(410);
    expect(response.json().Message).toMatch(/500/);
    expect(appended).toEqual([]);
  });

  it('takes 500 messages', async () => {
    const response = await post(
      '/v1/email/batch',
      Array.from({ length: 500 }, () => message()),
    );
    expect(response.statusCode).toBe(200);
    expect(response.json()).toHaveLength(500);
  });

  it('refuses a body that is not an array with 422, ErrorCode 300', async () => {
    const response = await post('/v1/email/batch', message());
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(300);
  });

  it('answers malformed JSON with 402 and another content type with 415', async () => {
    const malformed = await app.inject({
      method: 'POST',
      url: '/v1/email/batch',
      headers: { ...bearer(sender), 'content-type': 'application/json' },
      payload: '[{',
    });
    expect([malformed.statusCode, malformed.json().ErrorCode]).toEqual([422, 402]);
    const text = await app.inject({
      method: 'POST',
      url: '/v1/email/batch',
      headers: { ...bearer(sender), 'content-type': 'text/plain' },
      payload: '[]',
    });
    expect([text.statusCode, text.json().ErrorCode]).toEqual([415, 409]);
  });
});

describe('the outbound stream check, on every route that names a stream', () => {
  it.each([
    ['GET', '/v1/message-streams/broadcast/suppressions/dump'],
    ['POST', '/v1/message-streams/broadcast/suppressions/delete'],
    ['GET', '/v1/messages/outbound?messagestream=broadcast'],
    ['GET', '/v1/messages/outbound?messageStream=broadcast'],
  ] as const)('%s %s: 422, ErrorCode 1235, naming the stream', async (method, url) => {
    const token = method === 'GET' ? reader : sender;
    const response = await app.inject({
      method,
      url,
      headers: bearer(token),
      ...(method === 'POST' ? { payload: { Suppressions: [] } } : {}),
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(1235);
    expect(response.json().Message).toContain("'broadcast'");
  });

  it.each([
    ['GET', '/v1/message-streams/outbound/suppressions/dump'],
    ['GET', '/v1/messages/outbound?messagestream=outbound&messageStream='],
  ] as const)('%s %s: outbound (or no filter) is served', async (method, url) => {
    const response = await app.inject({ method, url, headers: bearer(reader) });
    expect(response.statusCode).toBe(200);
  });
});

describe('POST /v1/message-streams/outbound/suppressions/delete', () => {
  const url = '/v1/message-streams/outbound/suppressions/delete';

  it('deletes each address on its own, in one append applied to the view', async () => {
    const response = await post(url, {
      Suppressions: [{ EmailAddress: 'A@Example.org' }, { Email: 'x@example.org' }, { EmailAddress: 'not an address' }],
    });
    expect(response.statusCode).toBe(200);
    const results = response.json().Suppressions;
    expect(results.map((entry: { Status: string }) => entry.Status)).toEqual(['Deleted', 'Failed', 'Failed']);
    expect(results[0]).toEqual({ EmailAddress: 'A@Example.org', Status: 'Deleted', Message: null });
    expect(results[2].Message).toMatch(/^Invalid email address: /);
    expect(appended).toHaveLength(1);
    expect(appended[0]).toEqual([expect.objectContaining({ type: 'SuppressionDeleted' })]);
    expect(applied).toEqual(appended);
  });

  it.each([
    ['without a Suppressions array', { Suppressions: 'a@example.org' }],
    ['without a body', undefined],
  ])('refuses a request %s with 422, ErrorCode 300', async (_what, payload) => {
    const response = await app.inject({ method: 'POST', url, headers: bearer(sender), payload });
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(300);
    expect(appended).toEqual([]);
  });
});

describe('the answers outside any route', () => {
  it('answers an unknown path 404 with a Postmark-style body', async () => {
    const response = await app.inject({ method: 'GET', url: '/v1/nowhere?x=1' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.json()).toEqual({ ErrorCode: expect.any(Number), Message: expect.any(String) });
  });

  it('answers a method a known path does not have 405, with Allow', async () => {
    const response = await app.inject({ method: 'PUT', url: '/v1/email', headers: bearer(sender) });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('POST');
    expect(response.json().ErrorCode).toBe(1310);
  });
});

describe('authentication', () => {
  it.each([
    ['no key', {}],
    ['a key that was never issued', bearer(`sl_live_${randomBytes(32).toString('base64url')}`)],
    ['a malformed key', bearer('not-a-key')],
    ['an empty server token', { 'x-postmark-server-token': ' ' }],
    ['a revoked key', bearer(issue(['email:send'], { revoked: true }))],
  ])('answers %s with 401, ErrorCode 10, and sends nothing', async (_what, headers) => {
    const response = await post('/v1/email', message(), headers);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ ErrorCode: 10, Message: expect.any(String) });
    expect(appended).toEqual([]);
  });

  it('answers a key without the route’s scope with 403, ErrorCode 12', async () => {
    const response = await post('/v1/email', message(), bearer(reader));
    expect(response.statusCode).toBe(403);
    expect(response.json().ErrorCode).toBe(12);
  });
});
