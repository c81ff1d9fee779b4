import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { buildApi, type Api, type ApiDependencies } from '@sendline/api';
import {
  decideOrganization,
  formatApiKey,
  keyPrefixForDisplay,
  verificationRecordValue,
  type AccountCommand,
  type AccountEvent,
  type Scope,
} from '@sendline/domain';
import {
  AccountsView,
  AllowanceCounter,
  ClickHouseActivityReader,
  createClickHouse,
  createRedis,
  encryptSecret,
  EventStore,
  IdempotencyStore,
  secretKeyFromEnv,
  SuppressionView,
} from '@sendline/infra';
import { createHash } from 'node:crypto';
import { addresses } from './services';

export interface TestApi {
  app: Api;
  baseUrl: string;
  deps: ApiDependencies;
  close(): Promise<void>;
}

/** The real API on a random loopback port, on the real services (default topics and views). */
export async function startTestApi(overrides: Partial<ApiDependencies> = {}): Promise<TestApi> {
  const redis = createRedis(addresses.redisUrl);
  const clickhouse = createClickHouse(addresses.clickhouseUrl);
  const store = new EventStore({
    brokers: addresses.kafkaBrokers,
    registryUrl: addresses.schemaRegistryUrl,
    clientId: 'test-api',
  });
  const deps: ApiDependencies = {
    store,
    redis,
    accounts: new AccountsView(redis),
    suppressions: new SuppressionView(redis),
    allowance: new AllowanceCounter(redis),
    idempotency: new IdempotencyStore(redis),
    activity: new ClickHouseActivityReader(clickhouse, addresses.clickhouseDatabase),
    now: () => Date.now(),
    newId: () => randomUUID(),
    mailHost: 'mail.sendline.test',
    ...overrides,
  };
  const app = await buildApi(deps);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    app,
    deps,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: async () => {
      await app.close();
      await store.disconnect();
      await clickhouse.close();
      redis.disconnect();
    },
  };
}

export interface TestOrganization {
  organizationId: string;
  domain: string;
  liveKey: string;
  testKey: string;
  /** Issues another key (e.g. with fewer scopes). */
  issueKey(scopes: Scope[], mode?: 'live' | 'test'): Promise<{ token: string; keyId: string }>;
  /** Runs one account command through the decider, appends its events and applies them to the view. */
  run(command: Omit<AccountCommand, 'metadata'>): Promise<AccountEvent[]>;
}

const ALL_SCOPES: Scope[] = ['email:send', 'email:read', 'domains:read', 'members:read'];

/**
 * An organization with a verified domain and a live and a test key with every
 * scope, made through the account decider and the event store (as the console
 * does), and applied to the key view at once.
 */
export async function createTestOrganization(
  deps: Pick<ApiDependencies, 'store' | 'accounts'>,
  options: { domain?: string; allowance?: number | null } = {},
): Promise<TestOrganization> {
  const organizationId = randomUUID();
  const domain = options.domain ?? `${randomUUID().slice(0, 8)}.example.test`;
  const run = async (command: Omit<AccountCommand, 'metadata'>) => {
    const state = await deps.accounts.organizationState(organizationId);
    const events = decideOrganization(
      {
        ...command,
        metadata: { organizationId, now: Date.now(), eventIds: [randomUUID(), randomUUID()] },
      } as AccountCommand,
      state,
    );
    await deps.store.append(events);
    await deps.accounts.apply(events);
    return events;
  };
  const issueKey = async (scopes: Scope[], mode: 'live' | 'test' = 'live') => {
    const token = formatApiKey(mode, randomBytes(24).toString('base64url'));
    const keyId = randomUUID();
    await run({
      type: 'IssueApiKey',
      data: {
        keyId,
        name: `${mode} key`,
        scopes,
        mode,
        keyHash: createHash('sha256').update(token).digest('hex'),
        keyPrefix: keyPrefixForDisplay(token),
      },
    });
    return { token, keyId };
  };
  await run({
    type: 'CreateOrganization',
    data: { name: `Test org ${organizationId.slice(0, 8)}`, adminEmail: 'admin@example.test' },
  });
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const verificationToken = randomBytes(16).toString('hex');
  await run({
    type: 'AddDomain',
    data: {
      domain,
      verificationToken,
      dkimSelector: 'sl1',
      dkimPublicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      dkimPrivateKeyEncrypted: encryptSecret(
        privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        secretKeyFromEnv(),
      ),
    },
  });
  await run({ type: 'VerifyDomain', data: { domain, txtRecords: [verificationRecordValue(verificationToken)] } });
  if (options.allowance !== undefined)
    await run({ type: 'SetAllowance', data: { messagesPerMonth: options.allowance } });
  const live = await issueKey(ALL_SCOPES, 'live');
  const test = await issueKey(ALL_SCOPES, 'test');
  return { organizationId, domain, liveKey: live.token, testKey: test.token, issueKey, run };
}
