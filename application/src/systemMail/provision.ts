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
  /** The records to publish for the domain (ownership, MX, SPF, DKIM, DMARC). */
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
  /** Tries of the verification (a DNS server may see a new zone a moment late); default 1. */
  verifyAttempts?: number;
}

/**
 * Makes sure the system organization exists, owns the sender's domain and has it verified: creates what is missing
 * (the same account commands as `admin org create` / `domain add` / `domain verify`), changes nothing otherwise.
 * Safe to run at every start, by any number of processes. When the domain cannot be verified (its records not
 * published yet) it answers `verified: false` with the records to publish instead of failing.
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
  if (current.verified) return { organizationId, domain, verified: true, dnsRecords, created };

  await options.publish?.(dnsRecords);
  const attempts = Math.max(1, options.verifyAttempts ?? 1);
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      await accounts.verifyDomain(organizationId, domain);
      created.verified = true;
      return { organizationId, domain, verified: true, dnsRecords, created };
    } catch (error) {
      if (!(error instanceof DomainError && error.code === 'DomainVerificationFailed')) throw error;
      if (attempt < attempts) await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  return { organizationId, domain, verified: false, dnsRecords, created };
}

/** Runs `work`, taking the given refusal for "another process did it first". */
async function ignoring(code: DomainError['code'], work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof DomainError && error.code === code)) throw error;
  }
}
