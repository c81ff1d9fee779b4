import { randomBytes, randomUUID } from 'node:crypto';
import type { Scope } from '@sendline/domain';
import { hashApiKey, ServiceUnavailableError, type StoredApiKey } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/app';
import type { Api, ApiDependencies } from '../../src/context';
import { RETRY_AFTER_SECONDS } from '../../src/errors';

/**
 * The API built on stand-ins for its services (no server, no Kafka, no Redis): keys from a map, ClickHouse out of
 * reach. Enough for what these tests look at: routing, the OpenAPI document, authentication and error answers.
 */
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
const clickhouseDown = async () => {
  throw new ServiceUnavailableError('clickhouse', 'the activity store cannot be reached', { retriable: true });
};
const deps = {
  accounts: {
    apiKeyByHash: async (hash: string) => keys.get(hash) ?? null,
    organization: async () => ({ id: 'org-1', name: 'Unit', createdAt: 0, messagesPerMonth: null }),
    domains: async () => new Map(),
    members: async () => new Map(),
  },
  activity: { list: clickhouseDown, details: async () => null },
  suppressions: { list: async () => [] },
  now: () => Date.now(),
  newId: () => randomUUID(),
  mailHost: 'mail.sendline.test',
} as unknown as ApiDependencies;

let app: Api;
let document: {
  paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
};
let everyScope: string;
beforeAll(async () => {
  app = await buildApi(deps);
  document = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  everyScope = issue(['email:send', 'email:read', 'domains:read', 'members:read']);
});
afterAll(async () => {
  await app?.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The statuses the document gives one operation. */
function documented(path: string, method: string): string[] {
  return Object.keys(document.paths[path]?.[method]?.responses ?? {});
}

describe('an undeclared method on a known path', () => {
  it('answers 405 with Allow and a Postmark-style body', async () => {
    const response = await app.inject({ method: 'DELETE', url: '/v1/me', headers: bearer(everyScope) });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
    expect(response.json()).toEqual({
      ErrorCode: 1310,
      Message: 'The method DELETE is not allowed on /v1/me; it allows GET, HEAD.',
    });
  });

  it('answers 405 on a path with parameters, without asking for a key', async () => {
    const response = await app.inject({ method: 'PUT', url: '/v1/messages/outbound/any-id/details' });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
  });

  it('answers 405 before reading a body the path would refuse', async () => {
    const response = await app.inject({
      method: 'PATCH',
      url: '/v1/email',
      headers: { 'content-type': 'text/plain' },
      payload: 'not json',
    });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('POST');
    expect(response.json().ErrorCode).toBe(1310);
  });

  it('still answers an unknown path 404', async () => {
    const response = await app.inject({ method: 'DELETE', url: '/v1/nowhere' });
    expect(response.statusCode).toBe(404);
  });

  it('leaves the declared methods alone', async () => {
    expect((await app.inject({ method: 'GET', url: '/v1/me', headers: bearer(everyScope) })).statusCode).toBe(200);
    expect((await app.inject({ method: 'HEAD', url: '/v1/me', headers: bearer(everyScope) })).statusCode).toBe(200);
  });
});

describe('the OpenAPI document', () => {
  it.each([
    ['/v1/email', 'post', ['200', '401', '403', '409', '413', '415', '422', '503']],
    ['/v1/email/batch', 'post', ['200', '401', '403', '409', '413', '415', '422', '503']],
    ['/v1/messages/outbound', 'get', ['200', '401', '403', '422', '503']],
    ['/v1/messages/outbound/{messageId}/details', 'get', ['200', '401', '403', '404', '503']],
    ['/v1/message-streams/{stream}/suppressions/dump', 'get', ['200', '401', '403', '422', '503']],
    ['/v1/message-streams/{stream}/suppressions/delete', 'post', ['200', '401', '403', '413', '415', '422', '503']],
    ['/v1/me', 'get', ['200', '401', '503']],
    ['/v1/domains', 'get', ['200', '401', '403', '503']],
    ['/v1/members', 'get', ['200', '401', '403', '503']],
  ])('documents every status %s (%s) answers, 503 with Retry-After', (path, method, statuses) => {
    expect(documented(path, method)).toEqual(statuses);
    const unavailable = document.paths[path]?.[method]?.responses['503'];
    expect(unavailable?.headers).toHaveProperty('Retry-After');
  });

  it('documents the message streams served as an enum', () => {
    const email = document.paths['/v1/email']?.post as unknown as {
      requestBody: { content: { 'application/json': { schema: { properties: Record<string, { enum?: string[] }> } } } };
    };
    expect(email.requestBody.content['application/json'].schema.properties.MessageStream?.enum).toEqual(['outbound']);
    const dump = document.paths['/v1/message-streams/{stream}/suppressions/dump']?.get as unknown as {
      parameters: { name: string; schema: { enum?: string[] } }[];
    };
    expect(dump.parameters.find((p) => p.name === 'stream')?.schema.enum).toEqual(['outbound']);
  });

  it('keeps the documentation-only constraints out of the document', () => {
    expect(JSON.stringify(document)).not.toContain('x-documented');
  });
});

describe('what a route answers is what the document says', () => {
  /** Asserts the answer's status is documented for the operation, and returns the answer. */
  async function answer(method: string, url: string, path: string, headers: Record<string, string> = {}) {
    const response = await app.inject({ method: method as 'GET', url, headers });
    expect(documented(path, method.toLowerCase())).toContain(String(response.statusCode));
    return response;
  }

  it('a missing key: 401, ErrorCode 10', async () => {
    const response = await answer('GET', '/v1/domains', '/v1/domains');
    expect(response.statusCode).toBe(401);
    expect(response.json().ErrorCode).toBe(10);
  });

  it('a key without the scope: 403, ErrorCode 12', async () => {
    const response = await answer('GET', '/v1/members', '/v1/members', bearer(issue(['email:send'])));
    expect(response.statusCode).toBe(403);
    expect(response.json().ErrorCode).toBe(12);
  });

  it('an unknown message: 404, ErrorCode 701', async () => {
    const response = await answer(
      'GET',
      '/v1/messages/outbound/nope/details',
      '/v1/messages/outbound/{messageId}/details',
      bearer(everyScope),
    );
    expect(response.statusCode).toBe(404);
    expect(response.json().ErrorCode).toBe(701);
  });

  it('another message stream: still 422, ErrorCode 1235 (not a schema error), after the key', async () => {
    const path = '/v1/message-streams/{stream}/suppressions/dump';
    const refused = await answer('GET', '/v1/message-streams/broadcast/suppressions/dump', path, bearer(everyScope));
    expect(refused.statusCode).toBe(422);
    expect(refused.json().ErrorCode).toBe(1235);
    const anonymous = await answer('GET', '/v1/message-streams/broadcast/suppressions/dump', path);
    expect(anonymous.statusCode).toBe(401);
  });

  it('a wrong stream in either spelling of the filter: 422, ErrorCode 1235, even beside an empty one', async () => {
    const response = await answer(
      'GET',
      '/v1/messages/outbound?messagestream=&messageStream=broadcast',
      '/v1/messages/outbound',
      bearer(everyScope),
    );
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(1235);
  });

  it('a filter outside the documented forms: 422, ErrorCode 300', async () => {
    for (const query of ['count=0', 'count=501', 'fromdate=yesterday']) {
      const response = await answer('GET', `/v1/messages/outbound?${query}`, '/v1/messages/outbound', {
        ...bearer(everyScope),
      });
      expect(response.statusCode, query).toBe(422);
      expect(response.json().ErrorCode, query).toBe(300);
    }
  });

  it('ClickHouse out of reach: 503 with Retry-After', async () => {
    const response = await answer('GET', '/v1/messages/outbound', '/v1/messages/outbound', bearer(everyScope));
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe(String(RETRY_AFTER_SECONDS));
    expect(response.json().ErrorCode).toBe(503);
  });

  it('a body that is not JSON: 415, ErrorCode 409', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/v1/message-streams/outbound/suppressions/delete',
      headers: { ...bearer(everyScope), 'content-type': 'text/plain' },
      payload: 'x',
    });
    expect(response.statusCode).toBe(415);
    expect(response.json().ErrorCode).toBe(409);
    expect(documented('/v1/message-streams/{stream}/suppressions/delete', 'post')).toContain('415');
  });
});
