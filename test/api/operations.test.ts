import { Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { buildApi } from '@sendline/api';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { call } from '../support/http';

let api: TestApi;
let org: TestOrganization;
beforeAll(async () => {
  api = await startTestApi();
  org = await createTestOrganization(api.deps);
});
afterAll(async () => {
  await api?.close();
});

describe('operations endpoints', () => {
  it('serves an OpenAPI document generated from the route schemas', async () => {
    const response = await call(api.baseUrl, 'GET', '/openapi.json');
    expect(response.status).toBe(200);
    expect(response.body.openapi).toMatch(/^3\./);
    for (const path of [
      '/v1/email',
      '/v1/email/batch',
      '/v1/messages/outbound',
      '/v1/messages/outbound/{messageId}/details',
      '/v1/message-streams/{stream}/suppressions/dump',
      '/v1/message-streams/{stream}/suppressions/delete',
      '/v1/me',
      '/v1/domains',
      '/v1/members',
    ]) {
      expect(Object.keys(response.body.paths)).toContain(path);
    }
    expect(
      response.body.paths['/v1/email'].post.requestBody.content['application/json'].schema.properties,
    ).toHaveProperty('From');
  });

  it('answers /healthz, and /readyz with the state of every service it uses', async () => {
    const root = api.baseUrl.replace(/\/v1$/, '');
    expect((await call(root, 'GET', '/healthz')).status).toBe(200);
    const ready = await call(root, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', kafka: 'up', redis: 'up', registry: 'up', clickhouse: 'up' });
  });

  it('exports Prometheus metrics', async () => {
    const root = api.baseUrl.replace(/\/v1$/, '');
    await call(api.baseUrl, 'GET', '/me', { key: org.liveKey });
    const response = await fetch(`${root}/metrics`);
    const text = await response.text();
    expect(text).toContain('sendline_api_request_duration_seconds_bucket');
  });

  it('accepts a GET that carries Content-Type: application/json and no body (Postmark’s client does)', async () => {
    const response = await call(api.baseUrl, 'GET', '/me', {
      key: org.liveKey,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(response.status).toBe(200);
  });

  it('answers an unknown path with a JSON error', async () => {
    const response = await call(api.baseUrl, 'GET', '/nowhere', { key: org.liveKey });
    expect(response.status).toBe(404);
    expect(typeof response.body.Message).toBe('string');
  });

  it('never writes a key or a message body into its logs', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const app = await buildApi(api.deps, { logger: pino({ level: 'trace' }, sink) as never });
    const secretBody = `body-${randomUUID()}`;
    const response = await app.inject({
      method: 'POST',
      url: '/v1/email',
      headers: {
        authorization: `Bearer ${org.liveKey}`,
        'x-postmark-server-token': org.liveKey,
        'content-type': 'application/json',
      },
      payload: { From: `s@${org.domain}`, To: 'r@example.net', TextBody: secretBody, Subject: secretBody },
    });
    expect(response.statusCode).toBe(200);
    await app.close();
    const log = lines.join('');
    expect(log.length).toBeGreaterThan(0);
    expect(log).not.toContain(org.liveKey);
    expect(log).not.toContain(secretBody);
  });
});
