import { randomUUID } from 'node:crypto';
import { buildApi, connectApiDependencies, type Api, type ApiDependencies } from '@sendline/api';
import { API_KEY_SCOPES, type AccountEvent, type Scope } from '@sendline/domain';
import {
  AccountsService,
  ensureSystemOrganization,
  SystemMail,
  type AccountCommandInput,
  type DomainSummary,
  type SystemOrganizationStatus,
} from '@sendline/application';
import {
  createMxResolver,
  createTxtResolver,
  mailHostFromEnv,
  MemoryZone,
  mxResolverFromEnv,
  secretKeyFromEnv,
  startDnsServer,
  systemSenderFromEnv,
  txtResolverFromEnv,
  type HostResolver,
  type MxResolver,
  type TxtResolver,
} from '@sendline/infra';
import { addresses } from './services';

export interface TestApi {
  app: Api;
  baseUrl: string;
  deps: ApiDependencies;
  close(): Promise<void>;
}

/** A resolver that knows no name, so that no test asks DNS beyond this machine (a webhook URL's name is unresolved). */
export const noHostResolver: HostResolver = async (host) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

/**
 * The real API on a random loopback port, on the real services (default topics and views). Webhook URLs are
 * checked in production mode with `resolveHost` (default: no name resolves).
 */
export async function startTestApi(
  /** Dependencies to replace, or a function making them from the connected ones (the console's services, say). */
  overrides: Partial<ApiDependencies> | ((deps: ApiDependencies) => Partial<ApiDependencies>) = {},
  options: { resolveHost?: HostResolver } = {},
): Promise<TestApi> {
  const connected = connectApiDependencies(addresses, {
    clientId: 'test-api',
    mailHost: 'mail.sendline.test',
    development: false,
    resolveHost: options.resolveHost ?? noHostResolver,
  });
  const deps: ApiDependencies = {
    ...connected.deps,
    ...(typeof overrides === 'function' ? overrides(connected.deps) : overrides),
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
      await connected.disconnect();
    },
  };
}

export interface TestOrganization {
  organizationId: string;
  domain: string;
  liveKey: string;
  testKey: string;
  /** The console's service on the same store and view (what `admin` runs). */
  service: AccountsService;
  /** Issues another key (e.g. with fewer scopes). */
  issueKey(scopes: Scope[], mode?: 'live' | 'test'): Promise<{ token: string; keyId: string }>;
  /**
   * Adds another domain (with its DKIM keys), verified through DNS unless `verify` is false; its return path too
   * when `verifyReturnPath` is true.
   */
  addDomain(domain: string, options?: { verify?: boolean; verifyReturnPath?: boolean }): Promise<DomainSummary>;
  /** Runs one account command through the decider, appends its events and applies them to the view. */
  run(command: AccountCommandInput): Promise<AccountEvent[]>;
}

const ALL_SCOPES: Scope[] = [...API_KEY_SCOPES];

/**
 * The console's account use cases on `deps`' event store and accounts view, configured as the console would be
 * from the test environment: its SENDLINE_SECRET_KEY seals DKIM keys, the mail host is `deps.mailHost` (else
 * SENDLINE_MAIL_HOST or the default; the SPF domain is the mail host), and domains and return paths are verified
 * with `resolveTxt` and `resolveMx` (else SENDLINE_DNS_SERVERS or the system's resolver).
 */
export function testAccountsService(
  deps: Pick<ApiDependencies, 'store' | 'accounts'> & Partial<Pick<ApiDependencies, 'mailHost'>>,
  options: { resolveTxt?: TxtResolver; resolveMx?: MxResolver } = {},
): AccountsService {
  return new AccountsService({
    store: deps.store,
    view: deps.accounts,
    mailHost: deps.mailHost ?? mailHostFromEnv(),
    secretKey: () => secretKeyFromEnv(),
    resolveTxt: options.resolveTxt ?? txtResolverFromEnv(),
    resolveMx: options.resolveMx ?? mxResolverFromEnv(),
  });
}

/** The account use cases of `testAccountsService`, looking names up at one DNS server (`host:port`). */
export function accountsServiceAt(
  deps: Pick<ApiDependencies, 'store' | 'accounts'> & Partial<Pick<ApiDependencies, 'mailHost'>>,
  dnsServer: string,
): AccountsService {
  return testAccountsService(deps, {
    resolveTxt: createTxtResolver({ servers: [dnsServer] }),
    resolveMx: createMxResolver({ servers: [dnsServer] }),
  });
}

/**
 * An organization with a verified domain and a live and a test key with every scope, made by the
 * console's own service (AccountsService: decider, event store, view applied at once). The domain is
 * verified by a real DNS lookup against a DNS server on loopback that publishes its records.
 */
export async function createTestOrganization(
  deps: Pick<ApiDependencies, 'store' | 'accounts'> & Partial<Pick<ApiDependencies, 'mailHost'>>,
  options: { domain?: string; allowance?: number | null; verifyReturnPath?: boolean } = {},
): Promise<TestOrganization> {
  const zone = new MemoryZone();
  const service = testAccountsService(deps);
  const addDomain = async (
    domain: string,
    { verify = true, verifyReturnPath = false }: { verify?: boolean; verifyReturnPath?: boolean } = {},
  ) => {
    const added = await service.addDomain(organizationId, domain);
    if (!verify && !verifyReturnPath) return added;
    zone.publish(...added.dnsRecords);
    const dns = await startDnsServer({ zone });
    try {
      const verifier = accountsServiceAt(deps, dns.address);
      let summary = added;
      if (verify) summary = (await verifier.verifyDomain(organizationId, added.name)).domain;
      if (verifyReturnPath) summary = (await verifier.verifyReturnPath(organizationId, added.name)).domain;
      return summary;
    } finally {
      await dns.close();
    }
  };
  const issueKey = async (scopes: Scope[], mode: 'live' | 'test' = 'live') => {
    const issued = await service.issueApiKey(organizationId, { name: `${mode} key`, scopes, mode });
    return { token: issued.token, keyId: issued.id };
  };
  const { id: organizationId } = await service.createOrganization({
    name: `Test org ${randomUUID().slice(0, 8)}`,
    adminEmail: 'admin@example.test',
  });
  const domain = await addDomain(options.domain ?? `${randomUUID().slice(0, 8)}.example.test`, {
    verifyReturnPath: options.verifyReturnPath ?? false,
  });
  if (options.allowance !== undefined) await service.setAllowance(organizationId, options.allowance);
  const live = await issueKey(ALL_SCOPES, 'live');
  const test = await issueKey(ALL_SCOPES, 'test');
  return {
    organizationId,
    domain: domain.name,
    liveKey: live.token,
    testKey: test.token,
    service,
    issueKey,
    addDomain,
    run: (command) => service.execute(organizationId, command),
  };
}

/**
 * The system organization (the sender of system mail: sign-in links, notices) on `deps`' store and view, set up as
 * `admin system setup` does: created once, its domain verified through a DNS server on loopback that publishes its
 * records. Idempotent: every test file that sends system mail calls it.
 */
export async function ensureTestSystemOrganization(
  deps: Pick<ApiDependencies, 'store' | 'accounts'> & Partial<Pick<ApiDependencies, 'mailHost'>>,
  sender = systemSenderFromEnv(),
): Promise<SystemOrganizationStatus> {
  const zone = new MemoryZone();
  const dns = await startDnsServer({ zone });
  try {
    return await ensureSystemOrganization({
      accounts: accountsServiceAt(deps, dns.address),
      view: deps.accounts,
      sender,
      publish: async (records) => zone.publish(...records),
    });
  } finally {
    await dns.close();
  }
}

/** System mail on `deps`' services, as the API and the webhooks dispatcher build it. */
export function testSystemMail(
  deps: Pick<ApiDependencies, 'store' | 'accounts' | 'suppressions' | 'allowance' | 'now' | 'newId'>,
  sender = systemSenderFromEnv(),
): SystemMail {
  return new SystemMail({ sending: deps, sender });
}
