import { randomUUID } from 'node:crypto';
import { createTxtResolver, MemoryZone, startDnsServer } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestOrganization,
  startTestApi,
  testAccountsService,
  type TestApi,
  type TestOrganization,
} from '../support/api';
import { call } from '../support/http';
import { admin } from './adminCli';

/** The account endpoints of the API, on keys and organizations made by the console's service. */

let api: TestApi;
let a: TestOrganization;
let b: TestOrganization;

beforeAll(async () => {
  api = await startTestApi();
  [a, b] = await Promise.all([createTestOrganization(api.deps), createTestOrganization(api.deps)]);
});
afterAll(async () => {
  await api?.close();
});

const get = (path: string, key?: string, headers: Record<string, string> = {}) =>
  call(api.baseUrl, 'GET', path, { ...(key ? { key } : {}), headers });

describe('GET /v1/me', () => {
  it("shows the key's organization and the key's name, mode and scopes, never its secret", async () => {
    const response = await get('/me', a.liveKey);
    expect(response.status).toBe(200);
    const org = await api.deps.accounts.organization(a.organizationId);
    const keyId = [...(await api.deps.accounts.apiKeys(a.organizationId)).values()].find(
      (k) => k.mode === 'live',
    )!.keyId;
    expect(response.body).toEqual({
      organization: { id: a.organizationId, name: org!.name },
      key: {
        id: keyId,
        name: 'live key',
        mode: 'live',
        scopes: [
          'email:send',
          'email:read',
          'domains:read',
          'members:read',
          'webhooks:manage',
          'templates:read',
          'templates:manage',
        ],
        prefix: a.liveKey.slice(0, 12),
      },
    });
    expect(JSON.stringify(response.body)).not.toContain(a.liveKey.slice(12));
  });

  it('accepts any active key, whatever its scopes, and tells a test key by its mode', async () => {
    const { token } = await a.issueKey(['email:read'], 'test');
    const response = await get('/me', token);
    expect(response.status).toBe(200);
    expect(response.body.key).toMatchObject({ mode: 'test', scopes: ['email:read'], prefix: token.slice(0, 12) });
    expect(token.startsWith('sl_test_')).toBe(true);
  });

  it('answers 401 without a key and to a key that does not exist', async () => {
    const [none, unknown, foreign] = await Promise.all([
      get('/me'),
      get('/me', `sl_live_${'x'.repeat(43)}`),
      get('/me', 'em_live_not-a-sendline-key-at-all-0000000000'),
    ]);
    for (const response of [none, unknown, foreign]) {
      expect(response.status).toBe(401);
      expect(response.body.ErrorCode).toBe(10);
    }
  });
});

describe('a revoked key', () => {
  it('is refused by the API from the moment its revocation is done', async () => {
    const { token, keyId } = await a.issueKey(['email:send', 'domains:read']);
    expect((await get('/me', token)).status).toBe(200);

    await a.service.revokeApiKey(a.organizationId, keyId);
    // The API keeps no copy of the keys: the next request after the revocation is refused.
    expect((await get('/me', token)).status).toBe(401);
    // Postmark's header carries the same key: refused too.
    expect((await get('/domains', undefined, { 'X-Postmark-Server-Token': token })).status).toBe(401);
  });

  it('is refused as soon as `admin key revoke` has exited', async () => {
    const { token, keyId } = await a.issueKey(['email:send']);
    expect((await get('/me', token)).status).toBe(200);
    const run = await admin(['key', 'revoke', '--org', a.organizationId, '--key', keyId]);
    expect(run.code).toBe(0);
    const response = await get('/me', token);
    expect(response.status).toBe(401);
    expect(response.body.ErrorCode).toBe(10);
  });
});

describe('GET /v1/domains', () => {
  it("lists only the key's organization's domains, with their DNS records and state", async () => {
    const pending = await a.addDomain(`pending-${randomUUID().slice(0, 6)}.example.test`, { verify: false });
    const [fromA, fromB] = await Promise.all([get('/domains', a.liveKey), get('/domains', b.liveKey)]);
    expect(fromA.status).toBe(200);
    const names = (response: typeof fromA) => response.body.domains.map((d: { name: string }) => d.name).sort();
    expect(names(fromA)).toEqual([a.domain, pending.name].sort());
    expect(names(fromB)).toEqual([b.domain]);

    const verified = fromA.body.domains.find((d: { name: string }) => d.name === a.domain);
    expect(verified).toMatchObject({
      verified: true,
      verifiedAt: expect.stringMatching(/Z$/),
      addedAt: expect.stringMatching(/Z$/),
    });
    expect(verified.dnsRecords.map((r: { purpose: string; state: string }) => [r.purpose, r.state])).toEqual([
      ['ownership', 'verified'],
      ['mx', 'pending'],
      ['spf', 'pending'],
      ['dkim', 'not_checked'],
      ['dmarc', 'not_checked'],
    ]);
    // The return path's records, on bounces.<domain>: the domain's own MX is never asked for.
    expect(verified.returnPath).toEqual({ host: `bounces.${a.domain}`, verified: false, verifiedAt: null });
    expect(verified.dnsRecords[1]).toMatchObject({
      type: 'MX',
      name: `bounces.${a.domain}`,
      value: api.deps.mailHost,
      priority: 10,
    });
    expect(verified.dnsRecords[2]).toMatchObject({
      type: 'TXT',
      name: `bounces.${a.domain}`,
      value: `v=spf1 include:${api.deps.mailHost} -all`,
    });
    expect(verified.dnsRecordsToRemove).toEqual([]);
    const unverified = fromA.body.domains.find((d: { name: string }) => d.name === pending.name);
    expect(unverified).toMatchObject({ verified: false, verifiedAt: null });
    expect(unverified.dnsRecords[0]).toMatchObject({
      purpose: 'ownership',
      state: 'pending',
      name: `_sendline.${pending.name}`,
      value: pending.dnsRecords[0]!.value,
    });
    expect(JSON.stringify(fromA.body)).not.toMatch(/PRIVATE KEY|dkimPrivateKey/);
  });

  it('answers 403 to a key without domains:read, naming the scope', async () => {
    const { token } = await a.issueKey(['email:send', 'members:read']);
    const response = await get('/domains', token);
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ ErrorCode: 12, Message: 'This API key lacks the scope domains:read.' });
  });
});

describe('GET /v1/members', () => {
  it("lists only the key's organization's members", async () => {
    const email = `dev-${randomUUID().slice(0, 6)}@b.example`;
    await b.service.addMember(b.organizationId, email, 'developer');
    const [fromA, fromB] = await Promise.all([get('/members', a.liveKey), get('/members', b.liveKey)]);
    expect(fromA.status).toBe(200);
    expect(fromA.body.members).toEqual([
      { email: 'admin@example.test', role: 'admin', addedAt: expect.stringMatching(/Z$/) },
    ]);
    expect(fromB.body.members.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
      ['admin@example.test', 'admin'],
      [email, 'developer'],
    ]);
  });

  it('answers 403 to a key without members:read', async () => {
    const { token } = await b.issueKey(['domains:read']);
    const response = await get('/members', token);
    expect(response.status).toBe(403);
    expect(response.body.ErrorCode).toBe(12);
  });
});

describe('only verified domains send', () => {
  it('refuses a From on a domain added but not verified, and accepts it once DNS verification passed', async () => {
    const domain = `later-${randomUUID().slice(0, 6)}.example.test`;
    const added = await a.addDomain(domain, { verify: false });
    const send = () =>
      call(api.baseUrl, 'POST', '/email', {
        key: a.testKey,
        body: { From: `hello@${domain}`, To: 'someone@example.net', Subject: 'Hi', TextBody: 'Hi' },
      });
    const refused = await send();
    expect(refused.status).toBe(422);
    expect(refused.body.ErrorCode).toBe(401);

    const zone = new MemoryZone(added.dnsRecords);
    const dns = await startDnsServer({ zone });
    try {
      const service = testAccountsService(api.deps, { resolveTxt: createTxtResolver({ servers: [dns.address] }) });
      await service.verifyDomain(a.organizationId, domain);
    } finally {
      await dns.close();
    }
    const accepted = await send();
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ ErrorCode: 0, Message: 'Test job accepted' });
  });
});
