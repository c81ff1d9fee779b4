import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { foldOrganization, parseApiKey, type AccountEvent, type SuppressionEvent } from '@sendline/domain';
import {
  decryptSecret,
  hashApiKey,
  type AccountsView,
  type StoredEvent,
  type SuppressionEntry,
  type SuppressionView,
} from '@sendline/infra';
import { describe, expect, it } from 'vitest';
import { AccountsService, dkimSelectorFor, ManualSuppressions, newApiKey, newSendingDomain } from '../../src';

/**
 * The use cases without a server: an event store and views kept in memory record what each command appended and
 * applied, in order; the configuration (secret key, mail host, DNS answers) is what the test passes in.
 */

const NOW = Date.UTC(2026, 10, 23, 12);
const SECRET_KEY = randomBytes(32);

function memoryAccounts() {
  const steps: string[] = [];
  const applied: AccountEvent[] = [];
  const store = {
    append: async (events: StoredEvent[]) => void steps.push(`append ${events.map((e) => e.type).join(',')}`),
  };
  const view = {
    organizationState: async (id: string) =>
      foldOrganization(applied.filter((event) => event.metadata.organizationId === id)),
    organizations: async () => [...new Set(applied.map((event) => event.metadata.organizationId))],
    apply: async (events: readonly AccountEvent[]) => {
      steps.push(`apply ${events.map((e) => e.type).join(',')}`);
      applied.push(...events);
    },
  } as unknown as AccountsView;
  let id = 0;
  const lookups: string[] = [];
  const service = new AccountsService({
    store,
    view,
    mailHost: 'mx.example.test',
    secretKey: () => SECRET_KEY,
    resolveTxt: async (name) => {
      lookups.push(name);
      // The return path's SPF record, published as asked (the mail host is the SPF domain by default).
      if (!name.startsWith('_sendline.')) return [['v=spf1 include:mx.example.test', ' -all']];
      const domain = applied.find((event) => event.type === 'DomainAdded');
      return domain?.type === 'DomainAdded' ? [[`sendline-verification=${domain.data.verificationToken}`]] : [];
    },
    resolveMx: async (name) => {
      lookups.push(`MX ${name}`);
      return [{ exchange: 'mx.example.test', priority: 10 }];
    },
    now: () => NOW,
    newId: () => `id-${++id}`,
  });
  return { service, steps, applied, lookups, store, view };
}

describe('newApiKey', () => {
  it('makes a token the API parses, and carries only its SHA-256 and first characters', () => {
    const key = newApiKey('live');
    expect(parseApiKey(key.token)).toMatchObject({ mode: 'live' });
    expect(key.keyHash).toBe(hashApiKey(key.token));
    expect(key.keyPrefix).toBe(key.token.slice(0, 12));
    expect(newApiKey('live').token).not.toBe(key.token);
  });
});

describe('newSendingDomain', () => {
  it('seals the DKIM private key with the given secret key, the pair of the public key', async () => {
    const data = await newSendingDomain('example.test', NOW, SECRET_KEY, 'bounces');
    expect(data).toMatchObject({ domain: 'example.test', dkimSelector: 'sl20261123', returnPathLabel: 'bounces' });
    expect(data.dkimPrivateKeyEncrypted).not.toMatch(/PRIVATE KEY/);
    const privateKey = createPrivateKey(decryptSecret(data.dkimPrivateKeyEncrypted, SECRET_KEY));
    expect(createPublicKey(privateKey).export({ type: 'spki', format: 'pem' })).toBe(data.dkimPublicKey);
    expect(dkimSelectorFor(NOW)).toBe('sl20261123');
  });
});

describe('the accounts service', () => {
  it('appends each command’s events before applying them to the view, and appends nothing for a command that changes nothing', async () => {
    const { service, steps } = memoryAccounts();
    const org = await service.createOrganization({ name: 'Acme', adminEmail: 'ada@acme.test' });
    await service.setAllowance(org.id, 100);
    expect(await service.setAllowance(org.id, 100)).toEqual({ messagesPerMonth: 100, changed: false });
    expect(steps).toEqual([
      'append OrganizationCreated,MemberAdded',
      'apply OrganizationCreated,MemberAdded',
      'append AllowanceSet',
      'apply AllowanceSet',
    ]);
    expect(await service.organization(org.id)).toMatchObject({ name: 'Acme', messagesPerMonth: 100, members: 1 });
  });

  it('refuses a broken rule with its DomainError and appends nothing', async () => {
    const { service, steps } = memoryAccounts();
    await expect(service.addMember('no-such-org', 'bob@acme.test', 'viewer')).rejects.toMatchObject({
      code: 'OrganizationNotFound',
    });
    expect(steps).toEqual([]);
  });

  it('adds and verifies a domain with what the caller passed in: the secret key, the mail host, the DNS answers', async () => {
    const { service, applied, lookups } = memoryAccounts();
    const org = await service.createOrganization({ name: 'Acme', adminEmail: 'ada@acme.test' });
    const added = await service.addDomain(org.id, 'Mail.Acme.Test');
    expect(added.dnsRecords.find((record) => record.purpose === 'mx')).toMatchObject({
      name: 'bounces.mail.acme.test',
      value: 'mx.example.test',
    });
    expect(added.returnPath).toEqual({ host: 'bounces.mail.acme.test', verified: false, verifiedAt: null });
    expect(added.dnsRecordsToRemove).toEqual([]);
    const event = applied.find((e) => e.type === 'DomainAdded');
    if (event?.type !== 'DomainAdded') throw new Error('no DomainAdded applied');
    expect(() => decryptSecret(event.data.dkimPrivateKeyEncrypted, SECRET_KEY)).not.toThrow();

    const verified = await service.verifyDomain(org.id, 'mail.acme.test');
    expect(lookups).toEqual(['_sendline.mail.acme.test']);
    expect(verified).toMatchObject({ alreadyVerified: false, domain: { name: 'mail.acme.test', verified: true } });
  });

  it('verifies a return path by looking up its MX and TXT records, and says what it found', async () => {
    const { service, applied, lookups } = memoryAccounts();
    const org = await service.createOrganization({ name: 'Acme', adminEmail: 'ada@acme.test' });
    await service.addDomain(org.id, 'acme.test');
    const result = await service.verifyReturnPath(org.id, 'acme.test');
    expect(lookups.sort()).toEqual(['MX bounces.acme.test', 'bounces.acme.test']);
    expect(result).toMatchObject({
      alreadyVerified: false,
      domain: { returnPath: { host: 'bounces.acme.test', verified: true, verifiedAt: NOW } },
      found: { mx: ['10 mx.example.test'], txt: ['v=spf1 include:mx.example.test -all'] },
    });
    expect(applied.at(-1)?.type).toBe('DomainReturnPathVerified');
    expect(await service.verifyReturnPath(org.id, 'acme.test')).toMatchObject({ alreadyVerified: true });
  });

  it('gives a domain added before return paths its return path, and asks for its old MX to be removed', async () => {
    const { service, applied } = memoryAccounts();
    const org = await service.createOrganization({ name: 'Acme', adminEmail: 'ada@acme.test' });
    await service.addDomain(org.id, 'acme.test');
    // The same domain as an earlier version added it, a day before: its DomainAdded without a return path.
    const added = applied.find((event) => event.type === 'DomainAdded')!;
    if (added.type !== 'DomainAdded') throw new Error('no DomainAdded');
    delete added.data.returnPath;
    added.metadata.occurredAt = NOW - 24 * 60 * 60 * 1000;
    expect((await service.listDomains(org.id))[0]).toMatchObject({ returnPath: null, dnsRecordsToRemove: [{}] });

    const { domain, assigned } = await service.assignReturnPath(org.id, 'acme.test');
    expect(assigned).toBe(true);
    expect(domain.returnPath).toEqual({ host: 'bounces.acme.test', verified: false, verifiedAt: null });
    expect(domain.dnsRecordsToRemove).toEqual([
      { type: 'MX', name: 'acme.test', value: 'mx.example.test', priority: 10, purpose: 'mx' },
    ]);
    expect(applied.at(-1)?.type).toBe('DomainReturnPathAssigned');
    expect(await service.assignReturnPath(org.id, 'acme.test')).toMatchObject({ assigned: false });
  });

  it('issues a key whose token is returned once and whose hash is what the event carries', async () => {
    const { service, applied } = memoryAccounts();
    const org = await service.createOrganization({ name: 'Acme', adminEmail: 'ada@acme.test' });
    const issued = await service.issueApiKey(org.id, { name: 'k', scopes: ['email:send'], mode: 'test' });
    const event = applied.find((e) => e.type === 'ApiKeyIssued');
    expect(event?.data).toMatchObject({ keyId: issued.id, keyHash: hashApiKey(issued.token) });
    expect(JSON.stringify(applied)).not.toContain(issued.token);
  });
});

describe('manual suppressions', () => {
  function memorySuppressions() {
    const { service, store, view, steps } = memoryAccounts();
    const entries: SuppressionEntry[] = [];
    const suppressions = {
      list: async () => entries,
      apply: async (events: readonly SuppressionEvent[]) => {
        steps.push(`apply ${events.map((e) => e.type).join(',')}`);
        for (const event of events) {
          if (event.type === 'SuppressionAdded') entries.push({ ...event.data });
        }
      },
    } as unknown as SuppressionView;
    const manual = new ManualSuppressions({ store, accounts: view, suppressions, now: () => NOW, newId: () => 'e-1' });
    return { service, manual, steps };
  }

  it('suppresses an address once, through the suppression decider, the store and the view', async () => {
    const { service, manual, steps } = memorySuppressions();
    const org = await service.createOrganization({ name: 'Acme', adminEmail: 'ada@acme.test' });
    steps.length = 0;
    const first = await manual.add(org.id, 'Bob@Example.com', 'Customer');
    const again = await manual.add(org.id, 'bob@example.com', 'Admin');
    expect(first).toMatchObject({ reason: 'ManualSuppression', origin: 'Customer', added: true, createdAt: NOW });
    // The first entry stays: its origin, not the second request's.
    expect(again).toMatchObject({ reason: 'ManualSuppression', origin: 'Customer', added: false });
    expect(steps).toEqual(['append SuppressionAdded', 'apply SuppressionAdded']);
  });

  it('refuses an organization that does not exist', async () => {
    const { manual, steps } = memorySuppressions();
    await expect(manual.add('no-such-org', 'bob@example.com', 'Admin')).rejects.toMatchObject({
      code: 'OrganizationNotFound',
    });
    expect(steps).toEqual([]);
  });
});
