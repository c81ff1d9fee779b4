import {
  dnsRecordsFor,
  dnsRecordsToRemove,
  type ApiKeyMode,
  type ApiKeyState,
  type DnsRecord,
  type DomainState,
  type OrganizationState,
  type Role,
  type Scope,
  type ServiceDnsNames,
} from '@sendline/domain';

/** What a caller shows of an account: read from the organization's state, never a secret. */

export interface OrganizationSummary {
  id: string;
  name: string;
  createdAt: number;
  /** Messages per calendar month (UTC); null = unlimited. */
  messagesPerMonth: number | null;
  members: number;
  domains: number;
  activeKeys: number;
}

export interface MemberSummary {
  email: string;
  role: Role;
  addedAt: number;
}

export interface DomainSummary {
  name: string;
  verified: boolean;
  verifiedAt: number | null;
  addedAt: number;
  dkimSelector: string;
  /**
   * The return path, `<label>.<domain>`: the envelope sender's domain of the domain's mail once verified (until
   * then the service's own). null: the domain was added before return paths and has not been assigned one yet.
   */
  returnPath: { host: string; verified: boolean; verifiedAt: number | null } | null;
  /** What to publish: ownership TXT, the return path's MX and SPF, DKIM, DMARC (dnsRecordsFor). */
  dnsRecords: DnsRecord[];
  /** What earlier instructions asked for and should go: the MX on the domain itself (dnsRecordsToRemove). */
  dnsRecordsToRemove: DnsRecord[];
}

export interface DomainVerification {
  domain: DomainSummary;
  /** True when the domain was verified before this command (nothing was appended). */
  alreadyVerified: boolean;
  /** The TXT records found at `_sendline.<domain>`, each joined. */
  found: string[];
}

export interface ReturnPathVerification {
  domain: DomainSummary;
  /** True when the return path was verified before this command (nothing was appended). */
  alreadyVerified: boolean;
  /** What the lookups found at the return path: MX records (`<priority> <host>`) and TXT records, each joined. */
  found: { mx: string[]; txt: string[] };
}

export interface ApiKeySummary {
  id: string;
  name: string;
  mode: ApiKeyMode;
  scopes: Scope[];
  /** The token's first 12 characters (`sl_live_ab12`); never the secret. */
  prefix: string;
  issuedAt: number;
  revokedAt: number | null;
}

/** A key just issued: the only time its token exists outside the caller's hands. */
export interface IssuedApiKey extends ApiKeySummary {
  token: string;
}

/** An organization that exists (state.organization is set). */
export function organizationSummary(state: OrganizationState): OrganizationSummary {
  const organization = state.organization!;
  return {
    id: organization.id,
    name: organization.name,
    createdAt: organization.createdAt,
    messagesPerMonth: state.allowance,
    members: state.members.size,
    domains: state.domains.size,
    activeKeys: [...state.apiKeys.values()].filter((key) => key.revokedAt === null).length,
  };
}

export function keySummary(key: ApiKeyState): ApiKeySummary {
  return {
    id: key.keyId,
    name: key.name,
    mode: key.mode,
    scopes: [...key.scopes],
    prefix: key.prefix,
    issuedAt: key.issuedAt,
    revokedAt: key.revokedAt,
  };
}

/** A domain with the records to publish for it (and to remove), naming the service's names in them. */
export function domainSummary(name: string, domain: DomainState, service: ServiceDnsNames): DomainSummary {
  const { returnPath } = domain;
  return {
    name,
    verified: domain.verified,
    verifiedAt: domain.verifiedAt,
    addedAt: domain.addedAt,
    dkimSelector: domain.dkimSelector,
    returnPath: returnPath
      ? { host: returnPath.host, verified: returnPath.verifiedAt !== null, verifiedAt: returnPath.verifiedAt }
      : null,
    dnsRecords: dnsRecordsFor(name, domain, service),
    dnsRecordsToRemove: dnsRecordsToRemove(name, domain, service),
  };
}
