import { randomBytes } from 'node:crypto';
import { WebhooksService } from '@sendline/application';
import {
  foldOrganization,
  webhookConfig,
  type AccountEvent,
  type OrganizationCreated,
  type Scope,
  type WebhookCreated,
} from '@sendline/domain';
import { decryptSecret, hashApiKey, type AccountsView, type HostResolver, type StoredApiKey } from '@sendline/infra';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/app';
import type { Api, ApiDependencies } from '../../src/context';

/**
 * Postmark's /webhooks on the API, with the real use case (WebhooksService and the organization decider) on
 * stand-ins for the event store and the accounts view (events kept in memory and folded), and a resolver that
 * answers from a table: no server, no DNS.
 */
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const SECRET_KEY = randomBytes(32);
const keys = new Map<string, StoredApiKey>();
function issue(organizationId: string, scopes: Scope[]): string {
  const token = `sl_live_${randomBytes(32).toString('base64url')}`;
  keys.set(hashApiKey(token), {
    keyId: `key-${keys.size + 1}`,
    organizationId,
    name: 'unit',
    mode: 'live',
    scopes,
    revoked: false,
    prefix: token.slice(0, 12),
  });
  return token;
}

const created = (organizationId: string): OrganizationCreated => ({
  type: 'OrganizationCreated',
  data: { organizationId, name: organizationId, adminEmail: 'admin@example.org' },
  metadata: { eventId: `created-${organizationId}`, organizationId, occurredAt: NOW - 1000, schemaVersion: 1 },
});

let history: AccountEvent[] = [];
let appended: AccountEvent[][] = [];
const stateOf = (organizationId: string) =>
  foldOrganization(history.filter((event) => event.metadata.organizationId === organizationId));
const view = {
  apiKeyByHash: async (hash: string) => keys.get(hash) ?? null,
  organizationState: async (organizationId: string) => stateOf(organizationId),
  webhook: async (organizationId: string, id: number) => stateOf(organizationId).webhooks.get(id) ?? null,
  webhooks: async (organizationId: string) =>
    [...stateOf(organizationId).webhooks.values()]
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((webhook) => webhookConfig(organizationId, webhook)),
  apply: async (events: AccountEvent[]) => {
    history.push(...events);
  },
} as unknown as AccountsView;
const store = {
  append: async (events: AccountEvent[]) => {
    appended.push(events);
  },
};

const HOSTS: Record<string, string[]> = {
  'hooks.acme.example': ['93.184.216.34'],
  'internal.acme.example': ['93.184.216.34', '10.0.0.5'],
};
const resolveHost: HostResolver = async (host) => {
  const found = HOSTS[host];
  if (!found) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};

let ids = 0;
let nextWebhookId = 1000;
function apiWith(development: boolean): Promise<Api> {
  const webhooks = new WebhooksService({
    store,
    view,
    secretKey: () => SECRET_KEY,
    development,
    resolveHost,
    now: () => NOW,
    newId: () => `event-${++ids}`,
    newWebhookId: () => ++nextWebhookId,
  });
  return buildApi({
    accounts: view,
    store,
    webhooks,
    now: () => NOW,
    newId: () => `id-${++ids}`,
    mailHost: 'mail.sendline.test',
  } as unknown as ApiDependencies);
}

let app: Api;
let devApp: Api;
let ours: string;
let theirs: string;
let sender: string;
beforeAll(async () => {
  app = await apiWith(false);
  devApp = await apiWith(true);
  ours = issue('org-1', ['webhooks:manage']);
  theirs = issue('org-2', ['webhooks:manage', 'email:send']);
  sender = issue('org-1', ['email:send', 'email:read', 'domains:read', 'members:read']);
});
afterAll(async () => {
  await app?.close();
  await devApp?.close();
});
beforeEach(() => {
  history = [created('org-1'), created('org-2')];
  appended = [];
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, token = ours, on = app) {
  return on.inject({
    method,
    url,
    headers: bearer(token),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}
const create = (fields: Record<string, unknown> = {}, on = app) =>
  call('POST', '/v1/webhooks', { Url: 'https://hooks.acme.example/pm', ...fields }, ours, on);

describe('POST /v1/webhooks', () => {
  it("creates a webhook in Postmark's shape, with its signing secret shown once and every secret sealed", async () => {
    const response = await create({
      HttpAuth: { Username: 'acme', Password: 's3cret-pass' },
      HttpHeaders: [{ Name: 'X-Acme', Value: 'yes' }],
      Triggers: { Delivery: { Enabled: true }, Bounce: { Enabled: true, IncludeContent: true } },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toEqual({
      ID: expect.any(Number),
      Url: 'https://hooks.acme.example/pm',
      MessageStream: 'outbound',
      HttpAuth: { Username: 'acme', Password: '********' },
      HttpHeaders: [{ Name: 'X-Acme', Value: 'yes' }],
      Triggers: {
        Delivery: { Enabled: true },
        Bounce: { Enabled: true, IncludeContent: true },
        SubscriptionChange: { Enabled: false },
        Open: { Enabled: false, PostFirstOpenOnly: false },
        Click: { Enabled: false },
        SpamComplaint: { Enabled: false, IncludeContent: false },
      },
      Disabled: null,
      SigningSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const [event] = appended[0] as WebhookCreated[];
    expect(event?.type).toBe('WebhookCreated');
    expect(JSON.stringify(event)).not.toContain('s3cret-pass');
    expect(JSON.stringify(event)).not.toContain(body.SigningSecret);
    expect(decryptSecret(event!.data.signingSecretSealed, SECRET_KEY)).toBe(body.SigningSecret);
    expect(decryptSecret(event!.data.httpAuth!.passwordSealed, SECRET_KEY)).toBe('s3cret-pass');
  });

  it('accepts the triggers it cannot produce yet, and shows them', async () => {
    const response = await create({
      Triggers: { Open: { Enabled: true, PostFirstOpenOnly: true }, Click: { Enabled: true } },
    });
    expect(response.json().Triggers).toMatchObject({
      Open: { Enabled: true, PostFirstOpenOnly: true },
      Click: { Enabled: true },
    });
  });

  it('refuses plain http in production: 422, ErrorCode 1403', async () => {
    const response = await create({ Url: 'http://hooks.acme.example/pm' });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ ErrorCode: 1403, Message: 'The webhook Url must be https.' });
  });

  it.each([
    ['an IP literal on loopback', 'https://127.0.0.1/hook', 'loopback'],
    ['the metadata service', 'https://169.254.169.254/latest/meta-data', 'metadata'],
    ['a name with a private address', 'https://internal.acme.example/hook', 'private'],
    ['localhost', 'https://localhost:8443/hook', 'loopback'],
  ])('refuses %s: 422, ErrorCode 1402', async (_name, Url, addressClass) => {
    const response = await create({ Url });
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(1402);
    expect(response.json().Message).toContain(addressClass);
    expect(appended).toEqual([]);
  });

  it('accepts http and a local address in development (SENDLINE_DEV=1)', async () => {
    const response = await create({ Url: 'http://127.0.0.1:4000/hook' }, devApp);
    expect(response.statusCode).toBe(200);
  });

  it.each([
    [
      'a trigger field that is not a boolean',
      { Triggers: { Delivery: { Enabled: 'yes' } } },
      'Triggers.Delivery.Enabled',
    ],
    ['a field Postmark does not have', { Secret: 'x' }, ''],
    ['a Url that is not a string', { Url: 5 }, 'Url'],
  ])('refuses %s: 422, ErrorCode 403 naming the field', async (_name, fields, field) => {
    const response = await create(fields);
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(403);
    if (field) expect(response.json().Message).toContain(field);
  });

  it('refuses a header value with a line break: 422, ErrorCode 1405', async () => {
    const response = await create({ HttpHeaders: [{ Name: 'X-A', Value: 'a\r\nInjected: 1' }] });
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(1405);
    expect(response.json().Message).toMatch(/HttpHeaders/);
  });

  it('refuses another message stream: 422, ErrorCode 1235', async () => {
    const response = await create({ MessageStream: 'broadcast' });
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(1235);
  });

  it('refuses an eleventh webhook on the stream: 422, ErrorCode 1401', async () => {
    for (let i = 0; i < 10; i++) expect((await create()).statusCode).toBe(200);
    const response = await create();
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(1401);
  });

  it('needs the webhooks:manage scope: 403, ErrorCode 12', async () => {
    const response = await call('POST', '/v1/webhooks', { Url: 'https://hooks.acme.example/pm' }, sender);
    expect(response.statusCode).toBe(403);
    expect(response.json().ErrorCode).toBe(12);
  });
});

describe('reading, changing and deleting a webhook', () => {
  let id: number;
  beforeEach(async () => {
    id = (
      await create({
        HttpAuth: { Username: 'acme', Password: 'first-pass' },
        Triggers: { Delivery: { Enabled: true } },
      })
    ).json().ID;
  });

  it('lists and shows it without the signing secret and with the password masked', async () => {
    const list = await call('GET', '/v1/webhooks?MessageStream=outbound');
    expect(list.statusCode).toBe(200);
    expect(list.json().Webhooks).toHaveLength(1);
    const one = await call('GET', `/v1/webhooks/${id}`);
    expect(one.json()).toEqual(list.json().Webhooks[0]);
    expect(one.json()).not.toHaveProperty('SigningSecret');
    expect(one.json().HttpAuth).toEqual({ Username: 'acme', Password: '********' });
  });

  it("filters by stream under either spelling (the postmark client's is messageStream)", async () => {
    expect((await call('GET', '/v1/webhooks?messageStream=outbound')).json().Webhooks).toHaveLength(1);
    expect((await call('GET', '/v1/webhooks?messageStream=broadcast')).statusCode).toBe(422);
    expect((await call('GET', '/v1/webhooks?messageStream=&MessageStream=outbound')).json().ErrorCode).toBe(1235);
  });

  it('refuses a list of another stream: 422, ErrorCode 1235', async () => {
    const response = await call('GET', '/v1/webhooks?MessageStream=broadcast');
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(1235);
  });

  it('changes the fields given and keeps the others; the masked password sent back keeps the password', async () => {
    const shown = (await call('GET', `/v1/webhooks/${id}`)).json();
    const response = await call('PUT', `/v1/webhooks/${id}`, {
      Url: 'https://hooks.acme.example/v2',
      HttpAuth: shown.HttpAuth,
      Triggers: { Bounce: { Enabled: true } },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      ID: id,
      Url: 'https://hooks.acme.example/v2',
      Triggers: { Delivery: { Enabled: true }, Bounce: { Enabled: true, IncludeContent: false } },
    });
    const webhook = stateOf('org-1').webhooks.get(id)!;
    expect(decryptSecret(webhook.httpAuth!.passwordSealed, SECRET_KEY)).toBe('first-pass');
  });

  it('takes back a webhook read with GET, whole (ID and MessageStream included), as a change of nothing', async () => {
    const shown = (await call('GET', `/v1/webhooks/${id}`)).json();
    const before = appended.length;
    const response = await call('PUT', `/v1/webhooks/${id}`, shown);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(shown);
    expect(appended).toHaveLength(before);
  });

  it('refuses a change to a private address: 422, ErrorCode 1402', async () => {
    const response = await call('PUT', `/v1/webhooks/${id}`, { Url: 'https://10.1.2.3/' });
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(1402);
  });

  it('deletes it; then it is 404, ErrorCode 1400', async () => {
    const deleted = await call('DELETE', `/v1/webhooks/${id}`);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ ErrorCode: 0, Message: `Webhook ${id} removed.` });
    const gone = await call('GET', `/v1/webhooks/${id}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ ErrorCode: 1400, Message: `Webhook ${id} was not found.` });
  });

  it("is invisible to another organization's key: 404 to read, change or delete, and not in its list", async () => {
    for (const [method, payload] of [
      ['GET', undefined],
      ['PUT', { Url: 'https://hooks.acme.example/stolen' }],
      ['DELETE', undefined],
    ] as const) {
      const response = await call(method, `/v1/webhooks/${id}`, payload, theirs);
      expect(response.statusCode, method).toBe(404);
      expect(response.json().ErrorCode).toBe(1400);
    }
    expect((await call('GET', '/v1/webhooks', undefined, theirs)).json()).toEqual({ Webhooks: [] });
    expect(stateOf('org-1').webhooks.get(id)?.url).toBe('https://hooks.acme.example/pm');
  });

  it('answers 404 to an id that is not a number', async () => {
    const response = await call('GET', '/v1/webhooks/abc');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ ErrorCode: 1400, Message: 'Webhook abc was not found.' });
  });
});

describe('the OpenAPI document', () => {
  it('describes the five operations', async () => {
    const document = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(Object.keys(document.paths['/v1/webhooks'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(Object.keys(document.paths['/v1/webhooks/{id}'])).toEqual(expect.arrayContaining(['get', 'put', 'delete']));
  });
});
