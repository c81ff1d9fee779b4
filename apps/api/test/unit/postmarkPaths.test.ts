import { randomBytes, randomUUID } from 'node:crypto';
import type { Scope } from '@sendline/domain';
import { hashApiKey, type StoredApiKey } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/app';
import type { Api, ApiDependencies } from '../../src/context';

/**
 * Where Postmark clients other than postmark.js call (docs/api.md, "Postmark clients in other languages"): the /v1
 * routes answer at the root too (postmarker and the Rust crate drop the base address's path), and a trailing slash
 * names the same route (the Java client asks for `/email/`). The API is built on stand-ins for its services, no server.
 */
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const keys = new Map<string, StoredApiKey>();
function issue(scopes: Scope[]): string {
  const token = `sl_live_${randomBytes(32).toString('base64url')}`;
  keys.set(hashApiKey(token), {
    keyId: randomUUID(),
    organizationId: 'org-1',
    name: 'unit',
    mode: 'live',
    scopes,
    revoked: false,
    prefix: token.slice(0, 12),
  });
  return token;
}
const deps = {
  accounts: {
    apiKeyByHash: async (hash: string) => keys.get(hash) ?? null,
    organization: async () => ({ id: 'org-1', name: 'Unit', createdAt: 0, messagesPerMonth: null }),
    domain: async (_org: string, name: string) => (name === 'example.com' ? { verified: true } : null),
  },
  suppressions: {
    suppressedAmongMany: async (_org: string, lists: string[][]) => lists.map(() => new Set<string>()),
    list: async () => [],
    apply: async () => undefined,
  },
  allowance: { reserve: async () => true, used: async () => 0 },
  idempotency: { claim: async () => ({ kind: 'new', submittedAt: NOW }), complete: async () => undefined },
  activity: { list: async () => ({ total: 0, messages: [] }), details: async () => null },
  store: { append: async () => undefined },
  now: () => NOW,
  newId: () => randomUUID(),
  mailHost: 'mail.sendline.test',
} as unknown as ApiDependencies;

let app: Api;
let key: string;
beforeAll(async () => {
  app = await buildApi(deps);
  key = issue(['email:send', 'email:read', 'domains:read', 'members:read']);
});
afterAll(async () => {
  await app?.close();
});

const token = () => ({ 'x-postmark-server-token': key });
const send = { From: 'sender@example.com', To: 'a@example.org', Subject: 'Hi', TextBody: 'Hi' };

describe('the Postmark routes at the root', () => {
  it('sends at /email as at /v1/email', async () => {
    for (const url of ['/v1/email', '/email']) {
      const response = await app.inject({ method: 'POST', url, headers: token(), payload: send });
      expect(response.statusCode, url).toBe(200);
      expect(response.json()).toMatchObject({ To: 'a@example.org', ErrorCode: 0, Message: 'OK' });
    }
  });

  it('answers every read route there, with the same body', async () => {
    for (const path of ['/messages/outbound?count=10&offset=0', '/message-streams/outbound/suppressions/dump', '/me']) {
      const atV1 = await app.inject({ method: 'GET', url: `/v1${path}`, headers: token() });
      const atRoot = await app.inject({ method: 'GET', url: path, headers: token() });
      expect(atRoot.statusCode, path).toBe(200);
      expect(atRoot.json(), path).toEqual(atV1.json());
    }
  });

  it('asks for a key there too: none is 401, ErrorCode 10', async () => {
    const response = await app.inject({ method: 'POST', url: '/email', payload: send });
    expect(response.statusCode).toBe(401);
    expect(response.json().ErrorCode).toBe(10);
  });

  it('answers an undeclared method 405 with Allow, naming the path asked for', async () => {
    const response = await app.inject({ method: 'DELETE', url: '/email', headers: token() });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('POST');
    expect(response.json()).toEqual({
      ErrorCode: 1310,
      Message: 'The method DELETE is not allowed on /email; it allows POST.',
    });
  });

  it('keeps an unknown path 404, at the root and under /v1', async () => {
    for (const url of ['/emails', '/v1/v1/email', '/v2/email']) {
      const response = await app.inject({ method: 'POST', url, headers: token(), payload: send });
      expect(response.statusCode, url).toBe(404);
      expect(response.json()).toEqual({ ErrorCode: 404, Message: `No endpoint POST ${url}.` });
    }
  });

  it('leaves them out of the OpenAPI document, which names /v1 only', async () => {
    const document = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const paths = Object.keys(document.paths as object);
    expect(paths).toContain('/v1/email');
    expect(paths.filter((path) => !path.startsWith('/v1/'))).toEqual([]);
  });
});

describe('null fields of a send', () => {
  it('are taken as absent, as Postmark does (postmarker sends every field it knows, null where unset)', async () => {
    const nulls = { Cc: null, Bcc: null, HtmlBody: null, ReplyTo: null, Metadata: null, TrackOpens: null };
    const payload = { ...send, ...nulls, MessageStream: null, Headers: [], Attachments: [], TrackLinks: 'None' };
    const response = await app.inject({ method: 'POST', url: '/email', headers: token(), payload });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ To: 'a@example.org', ErrorCode: 0 });
  });
});

describe('a trailing slash', () => {
  it('names the same route (the Java client sends to /email/ and lists at /messages/outbound/?…)', async () => {
    const sent = await app.inject({ method: 'POST', url: '/v1/email/', headers: token(), payload: send });
    expect(sent.statusCode).toBe(200);
    expect(sent.json().ErrorCode).toBe(0);
    const listed = await app.inject({
      method: 'GET',
      url: '/v1/messages/outbound/?count=10&offset=0',
      headers: token(),
    });
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual({ TotalCount: 0, Messages: [] });
  });

  it('still answers an undeclared method 405', async () => {
    const response = await app.inject({ method: 'GET', url: '/v1/email/', headers: token() });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('POST');
  });
});
