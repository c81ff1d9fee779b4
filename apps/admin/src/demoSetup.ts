import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ensureSystemOrganization } from '@sendline/application';
import { API_KEY_SCOPES, DomainError } from '@sendline/domain';
import {
  createMxResolver,
  createTxtResolver,
  devDnsSettings,
  InfrastructureError,
  parseDnsServers,
  publishToZoneFile,
  retry,
  sleep,
  startDnsServer,
  withdrawFromZoneFile,
  zoneFileSource,
  type RunningDnsServer,
} from '@sendline/infra';
import type { AccountsService } from '@sendline/application';
import { AdminContext } from './context';

/**
 * The demo organization of `npm start`, made through the console's own service (the same commands and
 * events as `admin org create`, `domain add`, `domain verify`, `key create`):
 *
 * - if the credentials file exists and its live key still authenticates (an active key in the view),
 *   it is kept;
 * - otherwise: organization "Demo", domain demo.sendline.test, its records (ownership TXT, the return path's
 *   MX and SPF at bounces.demo.sendline.test, DKIM, DMARC) published in the development DNS zone file, the domain
 *   and its return path verified by real DNS lookups against the development DNS server, a live and a test key
 *   with every scope, and the credentials written with file mode 0600 (with the API's base address and our MX's,
 *   `mx`).
 * - either way, the demo domain's return path: a demo domain made before return paths existed is assigned one (as
 *   `admin domain assign-return-path` does), the MX the earlier demo published on the domain itself is withdrawn
 *   from the zone (what the console asks a customer to remove), and the return path is verified.
 *
 * DNS: the lookups go to SENDLINE_DNS_SERVERS, or else to the development DNS server
 * (127.0.0.1:5353, SENDLINE_DEV_DNS_PORT). When no server answers there within `dnsWaitMs` (`npm start`
 * launches the development server a moment before the demo), the demo serves the zone file itself,
 * in-process, on that address for the time of the verification.
 */

export const DEMO_ORGANIZATION_NAME = 'Demo';
export const DEMO_DOMAIN = 'demo.sendline.test';
export const DEMO_ADMIN_EMAIL = 'admin@demo.sendline.test';

export interface DemoCredentials {
  baseUrl: string;
  /** Our MX (`host:port`): where bounces and complaints for the demo's mail come back (apps/mx). */
  mx: string;
  organizationId: string;
  domain: string;
  keys: { live: string; test: string };
}

/** The MX's port under `npm start` (infra/local/bin/start sets SENDLINE_MX_PORT to this unless told otherwise). */
export const DEV_MX_PORT = 2526;

export interface DemoOptions {
  credentialsFile: string;
  env?: NodeJS.ProcessEnv;
  /** Default: SENDLINE_DEV_DNS_ZONE or .local/dns-zone.json. */
  zoneFile?: string;
  /** How long to wait for a DNS server to answer before serving the zone in-process. Default 5000 ms. */
  dnsWaitMs?: number;
  log?: (line: string) => void;
}

export interface DemoResult {
  credentials: DemoCredentials;
  /** A one-time console sign-in link for the demo admin (15 minutes). */
  adminSignInLink: string;
  /** False when the existing credentials were kept. */
  created: boolean;
}

function baseUrlFrom(env: NodeJS.ProcessEnv): string {
  return `http://127.0.0.1:${env.SENDLINE_API_PORT || 3000}/v1`;
}

/** The MX's address: SENDLINE_MX_ADDRESS (what `npm start` read from the MX's log), else its port on loopback. */
function mxAddressFrom(env: NodeJS.ProcessEnv): string {
  return env.SENDLINE_MX_ADDRESS || `127.0.0.1:${env.SENDLINE_MX_PORT || DEV_MX_PORT}`;
}

/** What a credentials file holds: written before the MX existed, it has no `mx` (added when kept). */
type StoredCredentials = Omit<DemoCredentials, 'mx'> & { mx?: string };

async function readCredentials(file: string): Promise<StoredCredentials | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as Partial<DemoCredentials>;
    if (
      typeof parsed.organizationId === 'string' &&
      typeof parsed.keys?.live === 'string' &&
      typeof parsed.keys.test === 'string'
    ) {
      return parsed as StoredCredentials;
    }
  } catch {
    // unreadable: made again below
  }
  return undefined;
}

/** Writes the credentials readable by the owner only (0600), atomically. */
async function writeCredentials(file: string, credentials: DemoCredentials): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temporary = `${file}.tmp`;
  await writeFile(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, file);
}

/** Whether some DNS server among `servers` answers (records or none), within `waitMs`. */
async function dnsAnswers(servers: string[], name: string, waitMs: number): Promise<boolean> {
  const lookup = createTxtResolver({ servers, timeoutMs: 400, tries: 1 });
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      await lookup(name);
      return true;
    } catch (error) {
      if (!(error instanceof InfrastructureError) || !error.retriable || Date.now() >= deadline) return false;
      await sleep(250);
    }
  }
}

/** host and port of `127.0.0.1:5353` / `[::1]:5353`, for serving the zone there ourselves. */
function hostAndPort(server: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(server);
  if (!match) return undefined;
  return { host: (match[1] ?? match[2])!, port: Number(match[3]) };
}

/** The zone file is re-read by the next query; a short retry covers a DNS server that has not seen it yet. */
function untilPublished<T>(code: DomainError['code'], verify: () => Promise<T>): Promise<T> {
  return retry(verify, {
    maxAttempts: 10,
    initialDelayMs: 200,
    maxDelayMs: 1000,
    shouldRetry: (error) =>
      (error instanceof DomainError && error.code === code) ||
      (error instanceof InfrastructureError && error.retriable),
  });
}

/**
 * The demo domain's return path, verified: assigned first to a demo domain made before return paths existed (its
 * old MX on the domain itself withdrawn from the zone, as the console asks a customer), its records published in
 * the zone, then checked through DNS. Does nothing when it is verified already.
 */
async function ensureDemoReturnPath(
  accounts: AccountsService,
  organizationId: string,
  zoneFile: string,
  servers: string[],
  log: (line: string) => void,
): Promise<void> {
  let domain = (await accounts.listDomains(organizationId)).find((d) => d.name === DEMO_DOMAIN);
  if (!domain || domain.returnPath?.verified) return;
  if (!domain.returnPath) {
    domain = (await accounts.assignReturnPath(organizationId, DEMO_DOMAIN)).domain;
    log(`domain ${DEMO_DOMAIN} was made before return paths: assigned ${domain.returnPath?.host}`);
  }
  await withdrawFromZoneFile(zoneFile, domain.dnsRecordsToRemove);
  await publishToZoneFile(zoneFile, domain.dnsRecords);
  await untilPublished('ReturnPathVerificationFailed', () => accounts.verifyReturnPath(organizationId, DEMO_DOMAIN));
  log(`return path ${domain.returnPath?.host} of ${DEMO_DOMAIN} verified through DNS at ${servers.join(', ')}`);
}

export async function ensureDemo(options: DemoOptions): Promise<DemoResult> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => undefined);
  const baseUrl = baseUrlFrom(env);
  const mx = mxAddressFrom(env);
  const dev = devDnsSettings(env);
  const zoneFile = options.zoneFile ?? dev.zoneFile;
  const servers = parseDnsServers(env.SENDLINE_DNS_SERVERS) ?? [dev.address];

  const context = new AdminContext({
    env,
    resolveTxt: createTxtResolver({ servers }),
    resolveMx: createMxResolver({ servers }),
  });
  let ownServer: RunningDnsServer | undefined;
  try {
    const accounts = context.accounts;
    // The system organization sends the console's sign-in links (system mail): set up beside the demo, its records
    // published in the same development zone and verified through the same DNS server.
    const setUpSystemMail = async () => {
      const status = await ensureSystemOrganization({
        accounts,
        view: context.accountsView,
        sender: context.systemSender,
        publish: (records) => publishToZoneFile(zoneFile, records),
        verifyAttempts: 10,
      });
      log(
        status.verified
          ? `system mail ready: ${context.systemSender} sends as organization ${status.organizationId}`
          : `system mail NOT ready: ${status.domain} could not be verified through DNS at ${servers.join(', ')}`,
      );
    };
    const existing = await readCredentials(options.credentialsFile);
    if (existing) {
      const key = await accounts.activeKey(existing.keys.live);
      if (key && key.organizationId === existing.organizationId) {
        const kept: DemoCredentials = { ...existing, baseUrl, mx };
        if (existing.baseUrl !== baseUrl || existing.mx !== mx) await writeCredentials(options.credentialsFile, kept);
        log(`demo organization ${existing.organizationId} kept: its live key still authenticates`);
        await ensureDemoReturnPath(accounts, existing.organizationId, zoneFile, servers, log);
        await setUpSystemMail();
        const adminSignInLink = await context.signInLink(existing.organizationId, DEMO_ADMIN_EMAIL);
        return { credentials: kept, created: false, adminSignInLink };
      }
      log(`the demo credentials in ${options.credentialsFile} no longer authenticate: making a new demo organization`);
    }

    const organization = await accounts.createOrganization({
      name: DEMO_ORGANIZATION_NAME,
      adminEmail: DEMO_ADMIN_EMAIL,
    });
    const domain = await accounts.addDomain(organization.id, DEMO_DOMAIN);
    await publishToZoneFile(zoneFile, domain.dnsRecords);
    log(`organization ${organization.id}: domain ${domain.name} added, its DNS records published in ${zoneFile}`);

    const ownership = domain.dnsRecords.find((record) => record.purpose === 'ownership')!;
    if (!(await dnsAnswers(servers, ownership.name, options.dnsWaitMs ?? 5000))) {
      const address = servers.length === 1 ? hostAndPort(servers[0]!) : undefined;
      if (!address) {
        throw new InfrastructureError('DemoDnsUnavailable', `no DNS server answers at ${servers.join(', ')}`, {
          retriable: true,
        });
      }
      ownServer = await startDnsServer({ zone: zoneFileSource(zoneFile), ...address });
      log(`no DNS server answered at ${servers.join(', ')}: serving ${zoneFile} there in-process for the verification`);
    }
    await untilPublished('DomainVerificationFailed', () => accounts.verifyDomain(organization.id, domain.name));
    log(`domain ${domain.name} verified through DNS at ${servers.join(', ')}`);
    await ensureDemoReturnPath(accounts, organization.id, zoneFile, servers, log);
    await setUpSystemMail();

    const live = await accounts.issueApiKey(organization.id, {
      name: 'Demo live key',
      scopes: API_KEY_SCOPES,
      mode: 'live',
    });
    const test = await accounts.issueApiKey(organization.id, {
      name: 'Demo test key',
      scopes: API_KEY_SCOPES,
      mode: 'test',
    });
    const credentials: DemoCredentials = {
      baseUrl,
      mx,
      organizationId: organization.id,
      domain: domain.name,
      keys: { live: live.token, test: test.token },
    };
    await writeCredentials(options.credentialsFile, credentials);
    log(`demo organization ${organization.id} ready; credentials written to ${options.credentialsFile} (mode 0600)`);
    const adminSignInLink = await context.signInLink(organization.id, DEMO_ADMIN_EMAIL);
    return { credentials, created: true, adminSignInLink };
  } finally {
    await ownServer?.close();
    await context.close();
  }
}
