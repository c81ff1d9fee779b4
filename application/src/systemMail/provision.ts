import { DomainError, type DnsRecord } from '@sendline/domain';
import type { AccountsView } from '@sendline/infra';
import type { AccountsService } from '../accounts';
import { systemSender } from './systemSender';

export const SYSTEM_ORGANIZATION_NAME = 'Sendline system';

export interface SystemOrganizationStatus {
  organizationId: string;
  domain: string;
  /** True once the domain is verified: system mail can be sent. */
  verified: boolean;
  /**
   * True once its return path is verified too: system mail's envelope sender is under the domain (until then, the
   * service's own return-path domain). A domain added before return paths has none until `admin domain
   * assign-return-path` gives it one.
   */
  returnPathVerified: boolean;
  /** The records to publish for the domain (ownership, the return path's MX and SPF, DKIM, DMARC). */
  dnsRecords: DnsRecord[];
  /** What this call changed: nothing when everything was there. */
  created: { organization: boolean; domain: boolean; verified: boolean };
}

export interface EnsureSystemOrganizationOptions {
  /** The account use cases; their TXT resolver is the one the verification asks. */
  accounts: AccountsService;
  view: AccountsView;
  /** The configured system sender. */
  sender: string;
  /**
   * Publishes the domain's records where `accounts`' resolver reads them (the development DNS zone file, a test's
   * zone) before the verification; without it the records are expected published already (production).
   */
  publish?: (records: readonly DnsRecord[]) => Promise<void>;
  /** Tries of each verification (a DNS server may see a new zone a moment late); default 1. */
  verifyAttempts?: number;
}

/** Runs `verify` up to `attempts` times while it is refused with `code`; whether it succeeded. */
async function verifying(
  attempts: number,
  code: DomainError['code'],
  verify: () => Promise<unknown>,
): Promise<boolean> {
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      await verify();
      return true;
    } catch (error) {
      if (!(error instanceof DomainError && error.code === code)) throw error;
      if (attempt < attempts) await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  return false;
}

/**
 * Makes sure the system organization exists, owns the sender's domain and has it and its return path verified:
 * creates what is missing (the same account commands as `admin org create` / `domain add` / `domain verify` /
 * `domain verify-return-path`), changes nothing otherwise. Safe to run at every start,
 * by any number of processes. When the domain or its return path cannot be verified (records not published yet) it
 * answers `verified: false` / `returnPathVerified: false` with the records to publish instead of failing.
 */
export async function ensureSystemOrganization(
  options: EnsureSystemOrganizationOptions,
): Promise<SystemOrganizationStatus> {
  const sender = systemSender(options.sender);
  const { organizationId, domain } = sender;
  const { accounts, view } = options;
  const created = { organization: false, domain: false, verified: false };

  let state = await view.organizationState(organizationId);
  if (state.organization === null) {
    await ignoring('OrganizationAlreadyExists', () =>
      accounts.createOrganization({ id: organizationId, name: SYSTEM_ORGANIZATION_NAME, adminEmail: sender.email }),
    );
    created.organization = true;
    state = await view.organizationState(organizationId);
  }
  if (!state.domains.has(domain)) {
    await ignoring('DomainAlreadyAdded', () => accounts.addDomain(organizationId, domain));
    created.domain = true;
    state = await view.organizationState(organizationId);
  }
  const current = state.domains.get(domain);
  if (!current) throw new Error(`the system domain ${domain} was added but the accounts view does not show it`);
  const dnsRecords = accounts.domainSummary(domain, current).dnsRecords;
  const status = (verified: boolean, returnPathVerified: boolean): SystemOrganizationStatus => ({
    organizationId,
    domain,
    verified,
    returnPathVerified,
    dnsRecords,
    created,
  });
  // A domain added before return paths has none to verify: assigning one is an admin's decision.
  const returnPath = current.returnPath;
  const returnPathPending = returnPath !== null && returnPath.verifiedAt === null;
  if (current.verified && !returnPathPending) return status(true, returnPath !== null);

  await options.publish?.(dnsRecords);
  const attempts = Math.max(1, options.verifyAttempts ?? 1);
  const verified =
    current.verified ||
    (await verifying(attempts, 'DomainVerificationFailed', () => accounts.verifyDomain(organizationId, domain)));
  created.verified = verified && !current.verified;
  const returnPathVerified = returnPathPending
    ? await verifying(attempts, 'ReturnPathVerificationFailed', () => accounts.verifyReturnPath(organizationId, domain))
    : returnPath !== null;
  return status(verified, returnPathVerified);
}

/** Runs `work`, taking the given refusal for "another process did it first". */
async function ignoring(code: DomainError['code'], work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof DomainError && error.code === code)) throw error;
  }
}
