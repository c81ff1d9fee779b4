import { createHash, createPrivateKey, createPublicKey, randomUUID } from 'node:crypto';
import type { AccountEvent } from '@sendline/domain';
import type { AccountsService } from '@sendline/application';
import {
  AccountsView,
  createRedis,
  decryptSecret,
  secretKeyFromEnv,
  type ConsumedEvent,
  type EventStore,
  type Redis,
  deleteKeys,
} from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testAccountsService } from '../support/api';
import { freshEventStore } from '../support/services';

/**
 * The console's service on fresh topics and a fresh view namespace: what reaches Kafka, what the view
 * holds, and that the view the console wrote equals the view the events rebuild.
 */

let store: EventStore;
let redis: Redis;
let view: AccountsView;
let service: AccountsService;

beforeAll(async () => {
  store = await freshEventStore('test-accounts');
  redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  view = new AccountsView(redis, `test-${randomUUID().slice(0, 8)}`);
  service = testAccountsService({ store, accounts: view, mailHost: 'mail.sendline.test' });
});
afterAll(async () => {
  for (const namespace of [view.namespace, `${view.namespace}-rebuilt`]) {
    await deleteKeys(redis, `${namespace}:*`);
  }
  await store.disconnect();
  redis.disconnect();
});

async function accountsTopic(): Promise<ConsumedEvent[]> {
  const all: ConsumedEvent[] = [];
  await store.readAll([store.topics.accounts], async (events) => void all.push(...events));
  return all;
}

describe('the accounts service', () => {
  it('puts only the SHA-256 of a key in Kafka, and only the sealed DKIM private key', async () => {
    const org = await service.createOrganization({ name: 'Secrets', adminEmail: 'admin@secrets.example' });
    const domain = await service.addDomain(org.id, 'secrets.example');
    const key = await service.issueApiKey(org.id, { name: 'k', scopes: ['email:send'], mode: 'live' });

    const consumed = await accountsTopic();
    const raw = Buffer.concat(consumed.map((item) => item.message.value ?? Buffer.alloc(0))).toString('latin1');
    expect(raw).not.toContain(key.token.slice(12));
    expect(raw).not.toContain('PRIVATE KEY');

    const events = consumed.map((item) => item.event as unknown as AccountEvent);
    const issued = events.find((e) => e.type === 'ApiKeyIssued');
    expect(issued?.data).toEqual({
      keyId: key.id,
      name: 'k',
      scopes: ['email:send'],
      mode: 'live',
      keyHash: createHash('sha256').update(key.token).digest('hex'),
      keyPrefix: key.token.slice(0, 12),
    });
    const added = events.find((e) => e.type === 'DomainAdded');
    if (added?.type !== 'DomainAdded') throw new Error('no DomainAdded in the topic');
    const privateKey = createPrivateKey(decryptSecret(added.data.dkimPrivateKeyEncrypted, secretKeyFromEnv()));
    expect(createPublicKey(privateKey).export({ type: 'spki', format: 'pem' })).toBe(added.data.dkimPublicKey);
    expect(domain.dnsRecords.find((r) => r.purpose === 'dkim')?.name).toBe(
      `${added.data.dkimSelector}._domainkey.secrets.example`,
    );
    // Keyed by entity on the compacted topic.
    expect(consumed.find((item) => item.event?.type === 'ApiKeyIssued')?.position.key).toBe(
      `apikey/${org.id}/${key.id}`,
    );
  });

  it('leaves a view that the events in Kafka rebuild exactly, and that applying them again does not change', async () => {
    const org = await service.createOrganization({ name: 'Replayable', adminEmail: 'ada@replay.example' });
    await service.addMember(org.id, 'bob@replay.example', 'viewer');
    await service.addMember(org.id, 'carol@replay.example', 'developer');
    await service.removeMember(org.id, 'bob@replay.example');
    await service.addDomain(org.id, 'replay.example');
    await service.addDomain(org.id, 'gone.replay.example');
    await service.removeDomain(org.id, 'gone.replay.example');
    const key = await service.issueApiKey(org.id, { name: 'one', scopes: ['email:read'], mode: 'test' });
    await service.issueApiKey(org.id, { name: 'two', scopes: ['email:send'], mode: 'live' });
    await service.revokeApiKey(org.id, key.id);
    await service.setAllowance(org.id, 1234);
    const live = await view.organizationState(org.id);

    const events = (await accountsTopic())
      .map((item) => item.event as unknown as AccountEvent)
      .filter((event) => event.metadata.organizationId === org.id);
    const rebuilt = new AccountsView(redis, `${view.namespace}-rebuilt`);
    await rebuilt.apply(events);
    expect(await rebuilt.organizationState(org.id)).toEqual(live);

    await view.apply(events);
    expect(await view.organizationState(org.id)).toEqual(live);
    expect(await rebuilt.apiKeyByHash(createHash('sha256').update(key.token).digest('hex'))).toMatchObject({
      revoked: true,
    });
  });

  it('decides nothing when the allowance is set to what it is', async () => {
    const org = await service.createOrganization({ name: 'Same', adminEmail: 'a@same.example' });
    expect(await service.setAllowance(org.id, 10)).toEqual({ messagesPerMonth: 10, changed: true });
    expect(await service.setAllowance(org.id, 10)).toEqual({ messagesPerMonth: 10, changed: false });
  });
});
