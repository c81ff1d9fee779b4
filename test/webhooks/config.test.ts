/**
 * Webhook configuration on the real services: Postmark's `/webhooks` API through the official `postmark` 5.1.0
 * client (createWebhook, getWebhooks, getWebhook, editWebhook, deleteWebhook), one organization's webhooks out of
 * another's reach, the secrets sealed in the log, and the accounts replay rebuilding every webhook from the log.
 */
import * as postmark from 'postmark';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhooksService, replayView, type ReplayOptions } from '@sendline/application';
import { startProjector, type RunningProjector } from '@sendline/projector';
import {
  AccountsView,
  createClickHouse,
  createRedis,
  decryptSecret,
  secretKeyFromEnv,
  type ClickHouseClient,
  type EventStore,
  type HostResolver,
  type Redis,
  deleteKeys,
} from '@sendline/infra';
import {
  createTestOrganization,
  startTestApi,
  testAccountsService,
  type TestApi,
  type TestOrganization,
} from '../support/api';
import { addresses, deleteTopicsAndDisconnect, eventually, freshEventStore, uniqueName } from '../support/services';

/** Names resolve from this table only: no DNS lookup leaves the machine. */
const HOSTS: Record<string, string[]> = {
  'hooks.acme.example': ['93.184.216.34'],
  'intranet.acme.example': ['10.20.30.40'],
};
const resolveHost: HostResolver = async (host) => {
  const found = HOSTS[host];
  if (!found) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};

function webhooksOn(store: EventStore, view: AccountsView): WebhooksService {
  return new WebhooksService({
    store,
    view,
    secretKey: () => secretKeyFromEnv(),
    development: false,
    resolveHost,
  });
}

describe("Postmark's webhooks API through the postmark 5.1.0 client", () => {
  let api: TestApi;
  let org: TestOrganization;
  let other: TestOrganization;
  let client: postmark.ServerClient;
  let otherClient: postmark.ServerClient;
  const clientOf = (token: string) =>
    new postmark.ServerClient(token, { requestHost: api.baseUrl.replace(/^http:\/\//, ''), useHttps: false });

  beforeAll(async () => {
    api = await startTestApi({}, { resolveHost });
    org = await createTestOrganization(api.deps);
    other = await createTestOrganization(api.deps);
    client = clientOf(org.liveKey);
    otherClient = clientOf(other.liveKey);
  });
  afterAll(async () => {
    await api?.close();
  });

  it('createWebhook, getWebhooks, getWebhook, editWebhook and deleteWebhook work against the API', async () => {
    const created = await client.createWebhook({
      Url: 'https://hooks.acme.example/postmark',
      MessageStream: 'outbound',
      HttpAuth: { Username: 'acme', Password: 'p4ssw0rd' },
      HttpHeaders: [{ Name: 'X-Acme', Value: 'on' }],
      Triggers: {
        Delivery: { Enabled: true },
        Bounce: { Enabled: true, IncludeContent: false },
        Open: { Enabled: true, PostFirstOpenOnly: true },
      },
    });
    expect(created).toMatchObject({
      ID: expect.any(Number),
      Url: 'https://hooks.acme.example/postmark',
      MessageStream: 'outbound',
      HttpAuth: { Username: 'acme', Password: '********' },
      HttpHeaders: [{ Name: 'X-Acme', Value: 'on' }],
      Triggers: {
        Delivery: { Enabled: true },
        Bounce: { Enabled: true, IncludeContent: false },
        Open: { Enabled: true, PostFirstOpenOnly: true },
        Click: { Enabled: false },
        SpamComplaint: { Enabled: false, IncludeContent: false },
        SubscriptionChange: { Enabled: false },
      },
    });
    const secret = (created as unknown as { SigningSecret: string }).SigningSecret;
    expect(secret).toMatch(/^whsec_/);

    const listed = await client.getWebhooks({ messageStream: 'outbound' });
    expect(listed.Webhooks.map((w) => w.ID)).toEqual([created.ID]);
    const { SigningSecret: _shownOnce, ...shown } = created as unknown as Record<string, unknown>;
    expect(listed.Webhooks[0]).toEqual(shown);

    const one = await client.getWebhook(created.ID);
    expect(one).toEqual(shown);
    expect(one).not.toHaveProperty('SigningSecret');

    const edited = await client.editWebhook(created.ID, {
      Url: 'https://hooks.acme.example/v2',
      Triggers: { Bounce: { Enabled: false }, SubscriptionChange: { Enabled: true } },
    });
    expect(edited).toMatchObject({
      ID: created.ID,
      Url: 'https://hooks.acme.example/v2',
      HttpAuth: { Username: 'acme', Password: '********' },
      Triggers: { Delivery: { Enabled: true }, Bounce: { Enabled: false }, SubscriptionChange: { Enabled: true } },
    });

    // What the dispatcher reads: the same webhook, secrets sealed with the service's key.
    const [config] = await api.deps.accounts.webhooks(org.organizationId);
    expect(config).toMatchObject({ webhookId: created.ID, url: 'https://hooks.acme.example/v2', enabled: true });
    expect(decryptSecret(config!.signingSecretSealed, secretKeyFromEnv())).toBe(secret);
    expect(decryptSecret(config!.httpAuth!.passwordSealed, secretKeyFromEnv())).toBe('p4ssw0rd');

    const deleted = await client.deleteWebhook(created.ID);
    expect(deleted).toEqual({ ErrorCode: 0, Message: `Webhook ${created.ID} removed.` });
    expect((await client.getWebhooks()).Webhooks).toEqual([]);
    const gone = await client.getWebhook(created.ID).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(postmark.Errors.PostmarkError);
    expect((gone as postmark.Errors.PostmarkError).statusCode).toBe(404);
    expect((gone as postmark.Errors.PostmarkError).code).toBe(1400);

    // The console's audit names the key that made each change (its prefix, never its secret).
    const { entries } = await api.deps.accounts.audit(org.organizationId, 3, 0);
    const actor = `api key ${org.liveKey.slice(0, 12)}`;
    expect(entries.map((entry) => [entry.action, entry.actor])).toEqual([
      ['WebhookDeleted', actor],
      ['WebhookUpdated', actor],
      ['WebhookCreated', actor],
    ]);
  });

  it("another organization's key can neither see, change nor delete our webhook (404)", async () => {
    const ours = await client.createWebhook({
      Url: 'https://hooks.acme.example/ours',
      Triggers: { Delivery: { Enabled: true } },
    });
    const attempts = [
      otherClient.getWebhook(ours.ID),
      otherClient.editWebhook(ours.ID, { Url: 'https://hooks.acme.example/stolen' }),
      otherClient.deleteWebhook(ours.ID),
    ];
    for (const failure of await Promise.all(attempts.map((p) => p.catch((error: unknown) => error)))) {
      expect(failure).toBeInstanceOf(postmark.Errors.PostmarkError);
      expect((failure as postmark.Errors.PostmarkError).statusCode).toBe(404);
    }
    expect((await otherClient.getWebhooks()).Webhooks).toEqual([]);
    expect(await api.deps.accounts.webhooks(other.organizationId)).toEqual([]);
    expect((await client.getWebhook(ours.ID)).Url).toBe('https://hooks.acme.example/ours');
  });

  it('refuses a URL that leads into a private network (ApiInputError, 422, ErrorCode 1402)', async () => {
    const failure = await client
      .createWebhook({ Url: 'https://intranet.acme.example/hook' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(postmark.Errors.ApiInputError);
    expect((failure as postmark.Errors.ApiInputError).statusCode).toBe(422);
    expect((failure as postmark.Errors.ApiInputError).code).toBe(1402);
  });

  it('a key without webhooks:manage is refused (403)', async () => {
    const { token } = await org.issueKey(['email:send']);
    const failure = await clientOf(token)
      .getWebhooks()
      .catch((error: unknown) => error);
    expect((failure as postmark.Errors.PostmarkError).statusCode).toBe(403);
  });

  it('the console issues keys with every scope, webhooks:manage among them', async () => {
    const service = testAccountsService(api.deps);
    const keys = await service.listApiKeys(org.organizationId);
    expect(keys[0]?.scopes).toContain('webhooks:manage');
  });
});

describe('replay accounts rebuilds the webhook configuration', () => {
  let store: EventStore;
  let redis: Redis;
  let clickhouse: ClickHouseClient;
  let projector: RunningProjector;
  const namespace = uniqueName('test-webhooks');
  const prefix = uniqueName('projector');
  const [orgA, orgB] = [randomUUID(), randomUUID()];

  beforeAll(async () => {
    store = await freshEventStore('webhooks-replay-test');
    redis = createRedis(addresses.redisUrl);
    clickhouse = createClickHouse(addresses.clickhouseUrl);
    projector = await startProjector({
      store,
      redis,
      clickhouse,
      database: 'unused',
      namespace,
      groupPrefix: prefix,
      projections: ['accounts'],
      retention: false,
      sessionTimeoutMs: 6000,
    });
  });
  afterAll(async () => {
    await projector?.stop();
    await deleteKeys(redis, `${namespace}*`);
    redis.disconnect();
    await clickhouse.close();
    await deleteTopicsAndDisconnect(store);
  });

  const options = (extra: Partial<ReplayOptions> = {}): ReplayOptions => ({
    store,
    redis,
    namespace,
    clickhouse,
    database: 'unused',
    liveGroupId: `${prefix}-accounts`,
    settleMs: 300,
    ...extra,
  });

  it('rebuilds created, changed and deleted webhooks equal to the live view, and restores a lost one', async () => {
    // Written by the use case into a view of its own; the projector builds the live view from the topic alone.
    const writerView = new AccountsView(redis, `${namespace}-writer`);
    const accounts = testAccountsService({ store, accounts: writerView });
    const webhooks = webhooksOn(store, writerView);
    for (const id of [orgA, orgB])
      await accounts.createOrganization({ id, name: `Org ${id.slice(0, 4)}`, adminEmail: 'a@example.test' });
    const kept = await webhooks.create(orgA, {
      url: 'https://hooks.acme.example/a',
      httpAuth: { username: 'a', password: 'secret-a' },
      httpHeaders: [{ name: 'X-Org', value: 'a' }],
      triggers: { delivery: { enabled: true } },
    });
    await webhooks.update(orgA, kept.id, { triggers: { bounce: { enabled: true, includeContent: true } } });
    const removed = await webhooks.create(orgA, { url: 'https://hooks.acme.example/removed' });
    await webhooks.delete(orgA, removed.id);
    await webhooks.create(orgB, {
      url: 'https://hooks.acme.example/b',
      triggers: { subscriptionChange: { enabled: true } },
    });

    const live = new AccountsView(redis, namespace);
    const expected = await writerView.webhooks(orgA);
    await eventually(
      async () => {
        const [a, b] = [await live.webhooks(orgA), await live.webhooks(orgB)];
        return JSON.stringify(a) === JSON.stringify(expected) && b.length === 1 ? true : undefined;
      },
      60_000,
      'the projector to apply the webhook events',
    );
    expect(expected.map((w) => w.webhookId)).toEqual([kept.id]);
    expect(expected[0]!.triggers.bounce).toEqual({ enabled: true, includeContent: true });

    const report = await replayView('accounts', options());
    expect(report).toMatchObject({
      view: 'accounts',
      equal: true,
      swapped: true,
      organizations: { live: 2, rebuilt: 2 },
    });
    expect(await live.webhooks(orgA)).toEqual(expected);
    expect((await live.webhooks(orgB)).map((w) => w.url)).toEqual(['https://hooks.acme.example/b']);

    // A projector bug loses orgA's webhooks: the replay tells, and a forced swap brings them back from the log.
    await redis.del(`${namespace}:{accounts}:org:${orgA}:webhooks`);
    const differing = await replayView('accounts', options({ waitForLiveMs: 1000 }));
    expect(differing).toMatchObject({ equal: false, swapped: false, differenceCount: 1 });
    expect(differing.differences[0]?.rebuilt?.counts).toMatchObject({ webhooks: 1 });
    const forced = await replayView('accounts', options({ waitForLiveMs: 1000, force: true }));
    expect(forced).toMatchObject({ swapped: true });
    expect(await live.webhooks(orgA)).toEqual(expected);
  });
});
