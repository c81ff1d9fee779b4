import { createHash, generateKeyPair, randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import {
  decideOrganization,
  decideSuppression,
  dnsRecordsFor,
  DomainError,
  formatApiKey,
  initialSuppressionState,
  keyPrefixForDisplay,
  normalizeDomainName,
  parseEmailAddress,
  verificationRecordName,
  type AccountCommand,
  type AccountEvent,
  type ApiKeyMode,
  type ApiKeyState,
  type DnsRecord,
  type DomainState,
  type OrganizationState,
  type Role,
  type Scope,
  type SuppressionOrigin,
  type SuppressionReason,
  type SuppressionState,
} from '@sendline/domain';
import { encryptSecret, secretKeyFromEnv } from '../crypto/secretBox';
import { txtResolverFromEnv, type TxtResolver } from '../dns/resolver';
import type { EventStore } from '../kafka/eventStore';
import type { AccountsView } from '../views/accounts/view';
import type { SuppressionView } from '../views/suppressions/view';

/**
 * The console's application service: every account change (organizations, members, domains, API keys,
 * allowance) and the console's manual suppressions, one way for the admin command line, the demo
 * and the tests.
 *
 * A command runs as: load the organization's state from the Redis accounts view, decide with the
 * organization decider (domain/), append the events to Kafka (EventStore.append: acknowledged by every
 * in-sync replica), then apply them to the view at once, so the caller reads its own write (a revoked
 * key is refused by the API from that moment). The projector applying the same events later changes
 * nothing: the view's updates are idempotent.
 *
 * Two consoles changing the same organization at the same instant may both decide on the same state
 * (the view is not locked); the decider's rules still hold per command, and the events of both land.
 *
 * Secrets: an API key's token is returned once by issueApiKey and never stored (only its SHA-256);
 * a DKIM private key is sealed with SENDLINE_SECRET_KEY before it enters an event and never returned.
 */

export const DEFAULT_MAIL_HOST = 'mail.sendline.dev';
/** Random octets in an API key's secret: 32 octets, 43 base64url characters. */
export const API_KEY_SECRET_OCTETS = 32;
export const DKIM_MODULUS_BITS = 2048;

/** SHA-256 of an API key token, lowercase hex: what events and the view keep, and what the API looks up. */
export function hashApiKey(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

type WithoutMetadata<C> = C extends unknown ? Omit<C, 'metadata'> : never;
/** An account command as a caller states it; the service adds the metadata (time, event ids). */
export type AccountCommandInput = WithoutMetadata<AccountCommand>;

export interface AccountsServiceOptions {
  store: Pick<EventStore, 'append'>;
  view: AccountsView;
  /** Needed by addSuppression only. */
  suppressions?: SuppressionView;
  now?: () => number;
  newId?: () => string;
  /** The key that seals DKIM private keys. Default: SENDLINE_SECRET_KEY, read when a domain is added. */
  secretKey?: () => Buffer;
  /** The mail host in MX and SPF records. Default: SENDLINE_MAIL_HOST, else mail.sendline.dev. */
  mailHost?: string;
  /** TXT lookups for domain verification. Default: node:dns with SENDLINE_DNS_SERVERS (or the system's). */
  resolveTxt?: TxtResolver;
}

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
  /** What to publish: ownership TXT, MX, SPF, DKIM, DMARC (dnsRecordsFor). */
  dnsRecords: DnsRecord[];
}

export interface DomainVerification {
  domain: DomainSummary;
  /** True when the domain was verified before this command (nothing was appended). */
  alreadyVerified: boolean;
  /** The TXT records found at `_sendline.<domain>`, each joined. */
  found: string[];
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

export interface ManualSuppressionResult {
  emailAddress: string;
  /** ManualSuppression, or the reason of the entry that was there already. */
  reason: SuppressionReason;
  origin: SuppressionOrigin;
  createdAt: number;
  /** False when the address was suppressed already (the first entry stays, nothing was appended). */
  added: boolean;
}

const generateRsaKeyPair = promisify(generateKeyPair);

function organizationNotFound(organizationId: string): DomainError {
  return new DomainError('OrganizationNotFound', `organization ${organizationId} does not exist`, { organizationId });
}

function keySummary(key: ApiKeyState): ApiKeySummary {
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

/** A DKIM selector naming the day the key was made (`sl20250110`), so a re-added domain gets a fresh name. */
export function dkimSelectorFor(now: number): string {
  return `sl${new Date(now).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

export class AccountsService {
  private readonly now: () => number;
  private readonly newId: () => string;
  readonly mailHost: string;
  private resolver: TxtResolver | undefined;

  constructor(private readonly options: AccountsServiceOptions) {
    this.now = options.now ?? Date.now;
    this.newId = options.newId ?? randomUUID;
    this.mailHost = options.mailHost ?? process.env.SENDLINE_MAIL_HOST ?? DEFAULT_MAIL_HOST;
    this.resolver = options.resolveTxt;
  }

  get view(): AccountsView {
    return this.options.view;
  }

  /**
   * Runs one account command: decide on the organization's state in the view, append the events
   * (acks from all in-sync replicas), apply them to the view. Returns the events (none when the
   * command changed nothing). Rule violations throw DomainError.
   */
  async execute(
    organizationId: string,
    command: AccountCommandInput,
    state?: OrganizationState,
  ): Promise<AccountEvent[]> {
    const current = state ?? (await this.options.view.organizationState(organizationId));
    const events = decideOrganization(
      {
        ...command,
        metadata: { organizationId, now: this.now(), eventIds: [this.newId(), this.newId()] },
      } as AccountCommand,
      current,
    );
    if (events.length > 0) {
      await this.options.store.append(events);
      await this.options.view.apply(events);
    }
    return events;
  }

  // ── organizations ─────────────────────────────────────────────────────────

  async createOrganization(input: {
    name: string;
    adminEmail: string;
    /** Default: a fresh UUID. */
    id?: string;
  }): Promise<OrganizationSummary & { adminEmail: string }> {
    const id = input.id ?? this.newId();
    const [created] = await this.execute(id, {
      type: 'CreateOrganization',
      data: { name: input.name, adminEmail: input.adminEmail },
    });
    if (created?.type !== 'OrganizationCreated') throw new Error('CreateOrganization decided no OrganizationCreated');
    return {
      id,
      name: created.data.name,
      adminEmail: created.data.adminEmail,
      createdAt: created.metadata.occurredAt,
      messagesPerMonth: null,
      members: 1,
      domains: 0,
      activeKeys: 0,
    };
  }

  async organization(organizationId: string): Promise<OrganizationSummary> {
    const state = await this.requireOrganization(organizationId);
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

  async listOrganizations(): Promise<OrganizationSummary[]> {
    const ids = await this.options.view.organizations();
    const all = await Promise.all(ids.map((id) => this.organization(id).catch(() => undefined)));
    return all
      .filter((organization): organization is OrganizationSummary => organization !== undefined)
      .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  // ── members ───────────────────────────────────────────────────────────────

  async addMember(organizationId: string, email: string, role: string): Promise<MemberSummary> {
    const [added] = await this.execute(organizationId, { type: 'AddMember', data: { email, role } });
    if (added?.type !== 'MemberAdded') throw new Error('AddMember decided no MemberAdded');
    return { email: added.data.email, role: added.data.role, addedAt: added.metadata.occurredAt };
  }

  async removeMember(organizationId: string, email: string): Promise<{ email: string; removedAt: number }> {
    const [removed] = await this.execute(organizationId, { type: 'RemoveMember', data: { email } });
    if (removed?.type !== 'MemberRemoved') throw new Error('RemoveMember decided no MemberRemoved');
    return { email: removed.data.email, removedAt: removed.metadata.occurredAt };
  }

  async listMembers(organizationId: string): Promise<MemberSummary[]> {
    const state = await this.requireOrganization(organizationId);
    return [...state.members].map(([email, member]) => ({ email, role: member.role, addedAt: member.addedAt }));
  }

  // ── domains ───────────────────────────────────────────────────────────────

  /**
   * Adds a sending domain: makes its ownership token and an RSA-2048 DKIM key pair, seals the private
   * key, and returns the records to publish. The private key is never returned.
   */
  async addDomain(organizationId: string, domain: string): Promise<DomainSummary> {
    const name = normalizeDomainName(domain);
    const state = await this.options.view.organizationState(organizationId);
    if (state.organization === null) throw organizationNotFound(organizationId);
    if (state.domains.has(name)) {
      throw new DomainError('DomainAlreadyAdded', `${name} is already a domain of the organization`, { domain: name });
    }
    const secretKey = (this.options.secretKey ?? secretKeyFromEnv)();
    const { publicKey, privateKey } = await generateRsaKeyPair('rsa', {
      modulusLength: DKIM_MODULUS_BITS,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const [added] = await this.execute(
      organizationId,
      {
        type: 'AddDomain',
        data: {
          domain: name,
          verificationToken: randomBytes(24).toString('base64url'),
          dkimSelector: dkimSelectorFor(this.now()),
          dkimPublicKey: publicKey,
          dkimPrivateKeyEncrypted: encryptSecret(privateKey, secretKey),
        },
      },
      state,
    );
    if (added?.type !== 'DomainAdded') throw new Error('AddDomain decided no DomainAdded');
    const { domain: addedName, ...keys } = added.data;
    return this.domainSummary(addedName, {
      ...keys,
      verified: false,
      verifiedAt: null,
      addedAt: added.metadata.occurredAt,
    });
  }

  /**
   * Looks up the TXT records of `_sendline.<domain>` and records the verification when one of them is
   * the domain's ownership value. Refused with DomainError 'DomainVerificationFailed' otherwise; a DNS
   * failure (timeout, SERVFAIL) throws a retriable InfrastructureError.
   */
  async verifyDomain(organizationId: string, domain: string): Promise<DomainVerification> {
    const name = normalizeDomainName(domain);
    const state = await this.options.view.organizationState(organizationId);
    if (state.organization === null) throw organizationNotFound(organizationId);
    const current = state.domains.get(name);
    if (!current)
      throw new DomainError('DomainNotFound', `${name} is not a domain of the organization`, { domain: name });
    const txtRecords = await this.resolveTxt(verificationRecordName(name));
    const found = txtRecords.map((record) => record.join(''));
    const events = await this.execute(
      organizationId,
      { type: 'VerifyDomain', data: { domain: name, txtRecords } },
      state,
    );
    const verified = events.find((event) => event.type === 'DomainVerified');
    return {
      domain: this.domainSummary(name, {
        ...current,
        verified: true,
        verifiedAt: verified ? verified.metadata.occurredAt : current.verifiedAt,
      }),
      alreadyVerified: events.length === 0,
      found,
    };
  }

  async removeDomain(organizationId: string, domain: string): Promise<{ name: string; removedAt: number }> {
    const [removed] = await this.execute(organizationId, { type: 'RemoveDomain', data: { domain } });
    if (removed?.type !== 'DomainRemoved') throw new Error('RemoveDomain decided no DomainRemoved');
    return { name: removed.data.domain, removedAt: removed.metadata.occurredAt };
  }

  async listDomains(organizationId: string): Promise<DomainSummary[]> {
    const state = await this.requireOrganization(organizationId);
    return [...state.domains].map(([name, domain]) => this.domainSummary(name, domain));
  }

  domainSummary(name: string, domain: DomainState): DomainSummary {
    return {
      name,
      verified: domain.verified,
      verifiedAt: domain.verifiedAt,
      addedAt: domain.addedAt,
      dkimSelector: domain.dkimSelector,
      dnsRecords: dnsRecordsFor(name, domain, this.mailHost),
    };
  }

  // ── API keys ──────────────────────────────────────────────────────────────

  /**
   * Issues an API key: a token `sl_<mode>_<43 random base64url characters>` from node:crypto. Only its
   * SHA-256 enters the event and the view; the token is in the result, once.
   */
  async issueApiKey(
    organizationId: string,
    input: { name: string; scopes: readonly string[]; mode: string },
  ): Promise<IssuedApiKey> {
    const token = formatApiKey(input.mode as ApiKeyMode, randomBytes(API_KEY_SECRET_OCTETS).toString('base64url'));
    const [issued] = await this.execute(organizationId, {
      type: 'IssueApiKey',
      data: {
        keyId: this.newId(),
        name: input.name,
        scopes: input.scopes,
        mode: input.mode,
        keyHash: hashApiKey(token),
        keyPrefix: keyPrefixForDisplay(token),
      },
    });
    if (issued?.type !== 'ApiKeyIssued') throw new Error('IssueApiKey decided no ApiKeyIssued');
    const { keyId, name, scopes, mode, keyPrefix } = issued.data;
    return {
      id: keyId,
      name,
      mode,
      scopes,
      prefix: keyPrefix,
      issuedAt: issued.metadata.occurredAt,
      revokedAt: null,
      token,
    };
  }

  async revokeApiKey(organizationId: string, keyId: string): Promise<ApiKeySummary> {
    const [revoked] = await this.execute(organizationId, { type: 'RevokeApiKey', data: { keyId } });
    if (revoked?.type !== 'ApiKeyRevoked') throw new Error('RevokeApiKey decided no ApiKeyRevoked');
    const { name, scopes, mode, keyPrefix, issuedAt } = revoked.data;
    return { id: keyId, name, mode, scopes, prefix: keyPrefix, issuedAt, revokedAt: revoked.metadata.occurredAt };
  }

  async listApiKeys(organizationId: string): Promise<ApiKeySummary[]> {
    const state = await this.requireOrganization(organizationId);
    return [...state.apiKeys.values()]
      .map(keySummary)
      .sort((a, b) => a.issuedAt - b.issuedAt || a.id.localeCompare(b.id));
  }

  /** The active key record for a token, or null (unknown or revoked): what the API would accept. */
  async activeKey(token: string): Promise<{ organizationId: string; keyId: string } | null> {
    const record = await this.options.view.apiKeyByHash(hashApiKey(token));
    return record && !record.revoked ? { organizationId: record.organizationId, keyId: record.keyId } : null;
  }

  // ── allowance ─────────────────────────────────────────────────────────────

  /** Sets the messages per calendar month (null = unlimited); setting the current value changes nothing. */
  async setAllowance(
    organizationId: string,
    messagesPerMonth: number | null,
  ): Promise<{ messagesPerMonth: number | null; changed: boolean }> {
    const events = await this.execute(organizationId, { type: 'SetAllowance', data: { messagesPerMonth } });
    return { messagesPerMonth, changed: events.length > 0 };
  }

  // ── suppressions (the console's ManualSuppression) ────────────────────────

  /**
   * Suppresses an address for the organization (reason ManualSuppression, origin Customer or Admin),
   * through the suppression decider, the event store and the suppression view.
   */
  async addSuppression(organizationId: string, emailAddress: string, origin: string): Promise<ManualSuppressionResult> {
    const suppressions = this.options.suppressions;
    if (!suppressions) throw new Error('this AccountsService was built without a SuppressionView');
    await this.requireOrganization(organizationId);
    const parsed = parseEmailAddress(emailAddress);
    const address = parsed.ok ? parsed.value.toLowerCase() : emailAddress;
    const existing = parsed.ok
      ? (await suppressions.list(organizationId)).find((entry) => entry.emailAddress.toLowerCase() === address)
      : undefined;
    const state: SuppressionState = existing ? { status: 'Suppressed', ...existing } : initialSuppressionState();
    const events = decideSuppression(
      {
        type: 'AddSuppression',
        data: { emailAddress, reason: 'ManualSuppression', origin: origin as SuppressionOrigin },
        metadata: { organizationId, now: this.now(), eventIds: [this.newId()] },
      },
      state,
    );
    if (events.length > 0) {
      await this.options.store.append(events);
      await suppressions.apply(events);
    }
    const added = events.find((event) => event.type === 'SuppressionAdded');
    if (added) return { ...added.data, added: true };
    return {
      emailAddress: existing?.emailAddress ?? address,
      reason: existing?.reason ?? 'ManualSuppression',
      origin: existing?.origin ?? (origin as SuppressionOrigin),
      createdAt: existing?.createdAt ?? this.now(),
      added: false,
    };
  }

  // ── helpers ───────────────────────────────────────────────────────────────

  private async requireOrganization(organizationId: string): Promise<OrganizationState> {
    const state = await this.options.view.organizationState(organizationId);
    if (state.organization === null) throw organizationNotFound(organizationId);
    return state;
  }

  private resolveTxt(name: string): Promise<string[][]> {
    this.resolver ??= txtResolverFromEnv();
    return this.resolver(name);
  }
}
