import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDemo } from '@sendline/admin';
import { readZoneFile, startDnsServer, zoneFileSource, type RunningDnsServer } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, testAccountsService, type TestApi } from '../support/api';
import { call } from '../support/http';
import { repositoryRoot } from './adminCli';

/**
 * The demo of `npm start` (apps/admin/src/demo.ts): a Demo organization whose domain is verified through
 * DNS against a server that serves the development zone file, keys that the API accepts, credentials
 * written 0600, and kept on the next run.
 */

interface Credentials {
  baseUrl: string;
  mx: string;
  organizationId: string;
  domain: string;
  keys: { live: string; test: string };
}

let directory: string;
let dns: RunningDnsServer;
let api: TestApi;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'sendline-demo-'));
  // Stands in for the development DNS server: the zone file, re-read at each query.
  dns = await startDnsServer({ zone: zoneFileSource(join(directory, 'dns-zone.json')) });
  api = await startTestApi();
});
afterAll(async () => {
  await dns?.close();
  await api?.close();
  await rm(directory, { recursive: true, force: true });
});

function demo(credentials: string, env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'apps/admin/src/demo.ts',
        '--credentials',
        credentials,
        '--zone',
        join(directory, 'dns-zone.json'),
      ],
      {
        cwd: repositoryRoot,
        env: {
          ...process.env,
          SENDLINE_DNS_SERVERS: dns.address,
          SENDLINE_API_PORT: '4321',
          SENDLINE_MX_ADDRESS: '',
          SENDLINE_MX_PORT: '4322',
          ...env,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

const readCredentials = async (file: string) => JSON.parse(await readFile(file, 'utf8')) as Credentials;

describe('the demo organization', () => {
  it('is made once with a DNS-verified domain and two keys the API accepts, and kept on the next run', async () => {
    const file = join(directory, 'credentials.json');
    const first = await demo(file);
    expect(first.code, first.stderr).toBe(0);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const credentials = await readCredentials(file);
    expect(credentials).toEqual({
      baseUrl: 'http://127.0.0.1:4321/v1',
      mx: '127.0.0.1:4322',
      organizationId: expect.any(String),
      domain: 'demo.sendline.test',
      keys: { live: expect.stringMatching(/^sl_live_/), test: expect.stringMatching(/^sl_test_/) },
    });

    // Its records are in the zone file, and the view says DNS verified the domain and its return path.
    const zone = await readZoneFile(join(directory, 'dns-zone.json'));
    const stored = (await api.deps.accounts.domain(credentials.organizationId, 'demo.sendline.test'))!;
    expect(stored.verified).toBe(true);
    expect(stored.returnPath).toMatchObject({ host: 'bounces.demo.sendline.test', verifiedAt: expect.any(Number) });
    expect(zone).toEqual(
      expect.arrayContaining([
        {
          type: 'TXT',
          name: '_sendline.demo.sendline.test',
          value: `sendline-verification=${stored.verificationToken}`,
        },
        expect.objectContaining({ type: 'MX', name: 'bounces.demo.sendline.test' }),
        expect.objectContaining({ type: 'TXT', name: 'bounces.demo.sendline.test' }),
        expect.objectContaining({ type: 'TXT', name: `${stored.dkimSelector}._domainkey.demo.sendline.test` }),
      ]),
    );
    expect(zone.filter((record) => record.type === 'MX' && record.name === 'demo.sendline.test')).toEqual([]);

    // The keys work against the API, with every scope.
    const me = await call(api.baseUrl, 'GET', '/me', { key: credentials.keys.live });
    expect(me.body).toMatchObject({
      organization: { id: credentials.organizationId, name: 'Demo' },
      key: {
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
      },
    });
    const sent = await call(api.baseUrl, 'POST', '/email', {
      key: credentials.keys.test,
      body: { From: 'hello@demo.sendline.test', To: 'someone@example.net', Subject: 'Hi', TextBody: 'Hi' },
    });
    expect(sent.body).toMatchObject({ ErrorCode: 0, Message: 'Test job accepted' });

    const second = await demo(file);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain('kept');
    expect(await readCredentials(file)).toEqual(credentials);

    // A kept demo follows the MX to another address.
    const moved = await demo(file, { SENDLINE_MX_ADDRESS: '127.0.0.1:4323' });
    expect(moved.code, moved.stderr).toBe(0);
    expect(await readCredentials(file)).toEqual({ ...credentials, mx: '127.0.0.1:4323' });
  });

  it('is made again when the kept live key no longer authenticates', async () => {
    const file = join(directory, 'revoked.json');
    expect((await demo(file)).code).toBe(0);
    const before = await readCredentials(file);
    const live = [...(await api.deps.accounts.apiKeys(before.organizationId)).values()].find((k) => k.mode === 'live')!;
    await testAccountsService(api.deps).revokeApiKey(before.organizationId, live.keyId);

    const again = await demo(file);
    expect(again.code, again.stderr).toBe(0);
    const after = await readCredentials(file);
    expect(after.organizationId).not.toBe(before.organizationId);
    expect((await call(api.baseUrl, 'GET', '/me', { key: after.keys.live })).status).toBe(200);
  });

  it('serves the zone itself, in-process, when no DNS server answers where it looks', async () => {
    const free = await startDnsServer({ zone: { records: async () => [] } });
    const address = free.address;
    await free.close(); // now nothing answers there
    const file = join(directory, 'fallback.json');
    const result = await ensureDemo({
      credentialsFile: file,
      zoneFile: join(directory, 'fallback-zone.json'),
      env: { ...process.env, SENDLINE_DNS_SERVERS: address },
      dnsWaitMs: 0,
    });
    expect(result.created).toBe(true);
    expect((await api.deps.accounts.domain(result.credentials.organizationId, 'demo.sendline.test'))?.verified).toBe(
      true,
    );
  });
});
