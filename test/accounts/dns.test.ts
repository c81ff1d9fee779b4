import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AccountsView,
  createRedis,
  createTxtResolver,
  InfrastructureError,
  MemoryZone,
  startDnsServer,
  writeZoneFile,
  zoneFileSource,
  type Redis,
  type RunningDnsServer,
} from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, adminJson, repositoryRoot } from './adminCli';

/**
 * Domain verification by real DNS queries (node:dns) against a DNS server on loopback (dns2), with
 * the console's resolver pointed at it through SENDLINE_DNS_SERVERS.
 */

interface DomainJson {
  name: string;
  verified: boolean;
  alreadyVerified?: boolean;
  dnsRecords: { type: string; name: string; value: string; purpose: string }[];
}

let redis: Redis;
let view: AccountsView;
let zone: MemoryZone;
let server: RunningDnsServer;

beforeAll(async () => {
  redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  view = new AccountsView(redis);
  zone = new MemoryZone();
  server = await startDnsServer({ zone });
});
afterAll(async () => {
  await server.close();
  redis.disconnect();
});

async function organizationWithDomain(domain: string) {
  const org = await adminJson<{ id: string }>([
    'org',
    'create',
    '--name',
    'DNS test',
    '--admin-email',
    'admin@example.test',
  ]);
  const added = await adminJson<DomainJson>(['domain', 'add', '--org', org.id, '--domain', domain]);
  const ownership = added.dnsRecords.find((record) => record.purpose === 'ownership')!;
  const returnPath = added.dnsRecords.filter((record) => record.purpose === 'mx' || record.purpose === 'spf');
  return { org, ownership, returnPath };
}

const dnsEnv = () => ({ SENDLINE_DNS_SERVERS: server.address, SENDLINE_DNS_TIMEOUT_MS: '500' });

describe('admin domain verify', () => {
  it('verifies a domain whose ownership TXT record is published', async () => {
    const domain = `${crypto.randomUUID().slice(0, 8)}.verify.example`;
    const { org, ownership } = await organizationWithDomain(domain);
    zone.publish(
      { type: 'TXT', name: ownership.name, value: 'some-other-service=abc' },
      { type: 'TXT', name: ownership.name, value: ownership.value },
    );

    const verified = await adminJson<DomainJson>(['domain', 'verify', '--org', org.id, '--domain', domain], dnsEnv());
    expect(verified).toMatchObject({ name: domain, verified: true, alreadyVerified: false });
    expect(await view.domain(org.id, domain)).toMatchObject({ verified: true, verifiedAt: expect.any(Number) });

    const again = await adminJson<DomainJson>(['domain', 'verify', '--org', org.id, '--domain', domain], dnsEnv());
    expect(again).toMatchObject({ verified: true, alreadyVerified: true });
  });

  it('refuses when no ownership record is published, and says what to publish', async () => {
    const domain = `${crypto.randomUUID().slice(0, 8)}.missing.example`;
    const { org, ownership } = await organizationWithDomain(domain);

    const run = await admin(['domain', 'verify', '--org', org.id, '--domain', domain], dnsEnv());
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `admin: domain not verified: no TXT record found at ${ownership.name}; ` +
        `publish TXT ${ownership.name} "${ownership.value}" and run verify again`,
    );
    expect(await view.domain(org.id, domain)).toMatchObject({ verified: false, verifiedAt: null });
  });

  it('refuses a wrong ownership record (another token, or the right one at another name)', async () => {
    const domain = `${crypto.randomUUID().slice(0, 8)}.wrong.example`;
    const { org, ownership } = await organizationWithDomain(domain);
    zone.publish(
      { type: 'TXT', name: ownership.name, value: 'sendline-verification=not-the-token-of-this-domain' },
      { type: 'TXT', name: domain, value: ownership.value },
    );

    const run = await admin(['domain', 'verify', '--org', org.id, '--domain', domain], dnsEnv());
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`found "sendline-verification=not-the-token-of-this-domain"`);
    expect(await view.domain(org.id, domain)).toMatchObject({ verified: false });
  });

  it('exits 2, as a failure worth retrying, when no DNS server answers', async () => {
    const silent = createSocket('udp4'); // takes queries and never answers
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    try {
      const domain = `${crypto.randomUUID().slice(0, 8)}.silent.example`;
      const { org } = await organizationWithDomain(domain);
      const run = await admin(['domain', 'verify', '--org', org.id, '--domain', domain], {
        SENDLINE_DNS_SERVERS: `127.0.0.1:${silent.address().port}`,
        SENDLINE_DNS_TIMEOUT_MS: '200',
      });
      expect(run.code).toBe(2);
      expect(run.stderr.trim()).toMatch(
        /^admin: TXT lookup of _sendline\..* failed: no DNS server answered in time \(try again\)$/,
      );
      expect(await view.domain(org.id, domain)).toMatchObject({ verified: false });
    } finally {
      silent.close();
    }
  });
});

describe('admin domain verify-return-path', () => {
  it("verifies a return path whose MX and SPF records are published at bounces.<domain>, not the domain's own", async () => {
    const domain = `${crypto.randomUUID().slice(0, 8)}.return.example`;
    const { org, returnPath } = await organizationWithDomain(domain);
    expect(returnPath.map((record) => [record.type, record.name])).toEqual([
      ['MX', `bounces.${domain}`],
      ['TXT', `bounces.${domain}`],
    ]);
    zone.publish(...returnPath.map((record) => ({ ...record, type: record.type as 'MX' | 'TXT' })), {
      type: 'TXT',
      name: `bounces.${domain}`,
      value: 'some-other-service=abc',
    });

    const run = ['domain', 'verify-return-path', '--org', org.id, '--domain', domain];
    const verified = await adminJson<DomainJson & { returnPath: { host: string; verified: boolean } }>(run, dnsEnv());
    expect(verified).toMatchObject({
      alreadyVerified: false,
      returnPath: { host: `bounces.${domain}`, verified: true },
    });
    expect((await view.domain(org.id, domain))?.returnPath).toMatchObject({ verifiedAt: expect.any(Number) });
    expect(await adminJson<DomainJson>(run, dnsEnv())).toMatchObject({ alreadyVerified: true });
  });

  it('refuses when the records are missing, naming each one and what to publish', async () => {
    const domain = `${crypto.randomUUID().slice(0, 8)}.noreturn.example`;
    const { org, returnPath } = await organizationWithDomain(domain);
    const [mx, spf] = returnPath;
    // The MX on the domain itself, as earlier instructions had it, does not count.
    zone.publish({ type: 'MX', name: domain, value: mx!.value, priority: 10 });

    const run = await admin(['domain', 'verify-return-path', '--org', org.id, '--domain', domain], dnsEnv());
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `admin: return path bounces.${domain} not verified: no MX record found at bounces.${domain}; ` +
        `publish MX bounces.${domain} 10 ${mx!.value}; no SPF record (TXT "v=spf1 …") found at bounces.${domain}; ` +
        `publish TXT bounces.${domain} "${spf!.value}"`,
    );
    expect((await view.domain(org.id, domain))?.returnPath).toMatchObject({ verifiedAt: null });
  });

  it('refuses an MX to another host, naming it', async () => {
    const domain = `${crypto.randomUUID().slice(0, 8)}.othermx.example`;
    const { org, returnPath } = await organizationWithDomain(domain);
    const [mx, spf] = returnPath;
    zone.publish(
      { type: 'MX', name: mx!.name, value: 'mx.elsewhere.example', priority: 10 },
      { type: 'TXT', name: spf!.name, value: spf!.value },
    );
    const run = await admin(['domain', 'verify-return-path', '--org', org.id, '--domain', domain], dnsEnv());
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`the MX of bounces.${domain} is mx.elsewhere.example, not ${mx!.value}`);
  });
});

describe('the TXT resolver', () => {
  it('returns a long record (a DKIM key, over 255 octets and 512-octet UDP) whole', async () => {
    const value = `v=DKIM1; k=rsa; p=${'A'.repeat(600)}`;
    zone.publish({ type: 'TXT', name: 'sl1._domainkey.long.example', value });
    const records = await createTxtResolver({ servers: [server.address] })('sl1._domainkey.long.example');
    expect(records.map((chunks) => chunks.join(''))).toEqual([value]);
    expect(records[0]!.every((chunk) => chunk.length <= 255)).toBe(true);
  });

  it('answers no records for a name that does not exist and for a name without TXT records', async () => {
    zone.publish({ type: 'MX', name: 'mx-only.example', value: 'mail.example' });
    const resolve = createTxtResolver({ servers: [server.address] });
    expect(await resolve('absent.example')).toEqual([]);
    expect(await resolve('mx-only.example')).toEqual([]);
  });

  it('fails retriably on SERVFAIL', async () => {
    const failing = await startDnsServer({
      zone: {
        records: async () => {
          throw new Error('zone unreadable');
        },
      },
    });
    try {
      const failure = await createTxtResolver({ servers: [failing.address], tries: 1 })('any.example').catch((e) => e);
      expect(failure).toBeInstanceOf(InfrastructureError);
      expect(failure).toMatchObject({ code: 'DnsServerFailure', retriable: true });
    } finally {
      await failing.close();
    }
  });

  it('refuses a malformed server list', () => {
    expect(() => createTxtResolver({ servers: ['not a server'] })).toThrow(
      expect.objectContaining({ code: 'BadDnsServers', retriable: false }),
    );
  });
});

describe('the development DNS server (infra/local/src/devDnsServer.ts)', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'sendline-dns-'));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('a zone file source sees an edit at the next query', async () => {
    const file = join(directory, 'zone-source.json');
    const source = zoneFileSource(file);
    expect(await source.records()).toEqual([]);
    await writeZoneFile(file, [{ type: 'TXT', name: 'a.example', value: 'one' }]);
    expect(await source.records()).toEqual([{ type: 'TXT', name: 'a.example', value: 'one' }]);
    await writeZoneFile(file, [{ type: 'TXT', name: 'a.example', value: 'two' }]);
    expect(await source.records()).toEqual([{ type: 'TXT', name: 'a.example', value: 'two' }]);
  });

  it('serves the zone file on loopback and re-reads it when it changes', async () => {
    const file = join(directory, 'dns-zone.json');
    const probe = createSocket('udp4');
    await new Promise<void>((resolve) => probe.bind(0, '127.0.0.1', resolve));
    const port = probe.address().port;
    probe.close();

    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'infra/local/src/devDnsServer.ts'], {
      cwd: repositoryRoot,
      env: { ...process.env, SENDLINE_DEV_DNS_PORT: String(port), SENDLINE_DEV_DNS_ZONE: file },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        let log = '';
        child.stdout!.on('data', (chunk: Buffer) => {
          log += chunk.toString();
          if (log.includes('"msg":"listening"')) resolve();
        });
        void exited.then((code) => reject(new Error(`devDnsServer exited ${code}`)));
      });
      const resolve = createTxtResolver({ servers: [`127.0.0.1:${port}`] });
      expect(await resolve('_sendline.dev.example')).toEqual([]);

      await writeZoneFile(file, [{ type: 'TXT', name: '_sendline.dev.example', value: 'sendline-verification=first' }]);
      expect(await resolve('_sendline.dev.example')).toEqual([['sendline-verification=first']]);

      await writeZoneFile(file, [
        { type: 'TXT', name: '_sendline.dev.example', value: 'sendline-verification=second' },
      ]);
      expect(await createTxtResolver({ servers: [`127.0.0.1:${port}`] })('_sendline.dev.example')).toEqual([
        ['sendline-verification=second'],
      ]);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
