import { randomUUID } from 'node:crypto';
import {
  DomainError,
  domainStateOf,
  joinTxtRecord,
  normalizeDomainName,
  organizationDecider,
  verificationRecordName,
  type AccountCommand,
  type AccountEvent,
  type DomainState,
  type OrganizationState,
  type ServiceDnsNames,
} from '@sendline/domain';
import {
  CommandHandler,
  DEFAULT_RETURN_PATH_LABEL,
  hashApiKey,
  type AccountsView,
  type EventAppender,
  type MxResolver,
  type TxtResolver,
} from '@sendline/infra';
import { newApiKey } from './apiKeys';
import { newSendingDomain } from './sendingDomains';
import {
  domainSummary,
  keySummary,
  organizationSummary,
  type ApiKeySummary,
  type DomainSummary,
  type DomainVerification,
  type IssuedApiKey,
  type MemberSummary,
  type OrganizationSummary,
  type ReturnPathVerification,
} from './summaries';

/**
 * The console's account use cases: every change to an organization (members, domains, API keys, allowance), one
 * way for the admin command line, the demo and the tests.
 *
 * A command runs through infra's CommandHandler with the organization decider: decide on the organization's state
 * read from the Redis accounts view, append the events to Kafka (acknowledged by every in-sync replica), then apply
 * them to the view at once, so the caller reads its own write (a revoked key is refused by the API from that
 * moment). The projector applying the same events later changes nothing: the view's updates are idempotent.
 *
 * Two consoles changing the same organization at the same instant may both decide on the same state
 * (the view is not locked); the decider's rules still hold per command, and the events of both land.
 *
 * Secrets: an API key's token is returned once by issueApiKey and never stored (only its SHA-256);
 * a DKIM private key is sealed with the caller's secret key before it enters an event and never returned.
 */

type WithoutMetadata<C> = C extends unknown ? Omit<C, 'metadata'> : never;
/** An account command as a caller states it; the service adds the metadata (time, event ids). */
export type AccountCommandInput = WithoutMetadata<AccountCommand>;

export interface AccountsServiceOptions {
  store: EventAppender;
  view: AccountsView;
  /** The mail host: every return path's MX (SENDLINE_MAIL_HOST). */
  mailHost: string;
  /** The domain every return path's SPF record includes (SENDLINE_SPF_DOMAIN); default: the mail host. */
  spfDomain?: string;
  /** The label of the return path given to domains (SENDLINE_RETURN_PATH_LABEL); default `bounces`. */
  returnPathLabel?: string;
  /** The key that seals DKIM private keys: asked for when a domain is added, so other commands run without it. */
  secretKey: () => Buffer;
  /** TXT lookups for domain and return path verification. */
  resolveTxt: TxtResolver;
  /** MX lookups for return path verification. */
  resolveMx: MxResolver;
  now?: () => number;
  newId?: () => string;
  /** Who runs the commands, recorded in their events for the audit (a member's address, 'admin command line'). */
  actor?: string;
}

/** The state of an organization that exists; refused with DomainError 'OrganizationNotFound' otherwise. */
export async function requireOrganization(view: AccountsView, organizationId: string): Promise<OrganizationState> {
  const state = await view.organizationState(organizationId);
  if (state.organization === null) {
    throw new DomainError('OrganizationNotFound', `organization ${organizationId} does not exist`, { organizationId });
  }
  return state;
}

export class AccountsService {
  private readonly now: () => number;
  private readonly newId: () => string;
  private readonly view: AccountsView;
  private readonly commands: CommandHandler<OrganizationState, AccountCommand, AccountEvent>;
  /** The service's names the records to publish point to. */
  readonly dnsNames: ServiceDnsNames;
  readonly returnPathLabel: string;

  constructor(private readonly options: AccountsServiceOptions) {
    this.now = options.now ?? Date.now;
    this.newId = options.newId ?? randomUUID;
    this.view = options.view;
    this.dnsNames = { mailHost: options.mailHost, spfDomain: options.spfDomain || options.mailHost };
    this.returnPathLabel = options.returnPathLabel || DEFAULT_RETURN_PATH_LABEL;
    this.commands = new CommandHandler({
      decider: organizationDecider,
      store: options.store,
      apply: (events) => options.view.apply(events),
    });
  }

  /**
   * Runs one account command: decide on the organization's state (`state`, or else the view's), append the
   * events, apply them to the view. Returns the events (none when the command changed nothing). Rule violations
   * throw DomainError.
   */
  async execute(
    organizationId: string,
    command: AccountCommandInput,
    state?: OrganizationState,
  ): Promise<AccountEvent[]> {
    const current = state ?? (await this.view.organizationState(organizationId));
    return this.commands.handle(
      {
        ...command,
        metadata: {
          organizationId,
          now: this.now(),
          eventIds: [this.newId(), this.newId()],
          ...(this.options.actor !== undefined ? { actor: this.options.actor } : {}),
        },
      } as AccountCommand,
      current,
    );
  }

  /** The same use cases, run by `actor` (recorded in every event they append). */
  as(actor: string): AccountsService {
    return new AccountsService({ ...this.options, now: this.now, newId: this.newId, actor });
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
    return organizationSummary(await this.requireOrganization(organizationId));
  }

  async listOrganizations(): Promise<OrganizationSummary[]> {
    const ids = await this.view.organizations();
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

  /** Gives a member another role; the last admin cannot be demoted (DomainError 'CannotRemoveLastAdmin'). */
  async changeMemberRole(organizationId: string, email: string, role: string): Promise<MemberSummary> {
    const state = await this.requireOrganization(organizationId);
    await this.execute(organizationId, { type: 'ChangeMemberRole', data: { email, role } }, state);
    const member = await this.view.member(organizationId, email);
    if (!member) throw new Error('ChangeMemberRole left no member in the view');
    return { email: email.toLowerCase(), role: member.role, addedAt: member.addedAt };
  }

  async listMembers(organizationId: string): Promise<MemberSummary[]> {
    const state = await this.requireOrganization(organizationId);
    return [...state.members].map(([email, member]) => ({ email, role: member.role, addedAt: member.addedAt }));
  }

  // ── domains ───────────────────────────────────────────────────────────────

  /**
   * Adds a sending domain: makes its ownership token and an RSA-2048 DKIM key pair, seals the private
   * key, gives it its return path (`<returnPathLabel>.<domain>`), and returns the records to publish. The private
   * key is never returned.
   */
  async addDomain(organizationId: string, domain: string): Promise<DomainSummary> {
    const name = normalizeDomainName(domain);
    const state = await this.requireOrganization(organizationId);
    if (state.domains.has(name)) {
      throw new DomainError('DomainAlreadyAdded', `${name} is already a domain of the organization`, { domain: name });
    }
    // The key is asked for before the key pair is made: without it, nothing is worth generating.
    const secretKey = this.options.secretKey();
    const data = await newSendingDomain(name, this.now(), secretKey, this.returnPathLabel);
    const [added] = await this.execute(organizationId, { type: 'AddDomain', data }, state);
    if (added?.type !== 'DomainAdded') throw new Error('AddDomain decided no DomainAdded');
    return this.domainSummary(added.data.domain, domainStateOf(added));
  }

  /**
   * Looks up the TXT records of `_sendline.<domain>` and records the verification when one of them is
   * the domain's ownership value. Refused with DomainError 'DomainVerificationFailed' otherwise; a DNS
   * failure (timeout, SERVFAIL) throws a retriable InfrastructureError.
   */
  async verifyDomain(organizationId: string, domain: string): Promise<DomainVerification> {
    const name = normalizeDomainName(domain);
    const state = await this.requireOrganization(organizationId);
    const current = state.domains.get(name);
    if (!current)
      throw new DomainError('DomainNotFound', `${name} is not a domain of the organization`, { domain: name });
    const txtRecords = await this.options.resolveTxt(verificationRecordName(name));
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

  /**
   * Gives a domain added before return paths existed its return path, `<returnPathLabel>.<domain>` (an event:
   * DomainReturnPathAssigned); its summary then lists the records to publish and the MX to remove. A domain that
   * has this return path already is left as it is (`assigned: false`); one with another is refused
   * ('ReturnPathAlreadyAssigned').
   */
  async assignReturnPath(
    organizationId: string,
    domain: string,
  ): Promise<{ domain: DomainSummary; assigned: boolean }> {
    const name = normalizeDomainName(domain);
    const state = await this.requireOrganization(organizationId);
    const events = await this.execute(
      organizationId,
      { type: 'AssignReturnPath', data: { domain: name, returnPathLabel: this.returnPathLabel } },
      state,
    );
    const assigned = events.find((event) => event.type === 'DomainReturnPathAssigned');
    const current = assigned ? domainStateOf(assigned) : state.domains.get(name)!;
    return { domain: this.domainSummary(name, current), assigned: assigned !== undefined };
  }

  /**
   * Looks up the MX and TXT records of the domain's return path and records its verification when they are as
   * published (an MX to the mail host, an SPF record including the SPF domain). Refused with DomainError
   * 'ReturnPathVerificationFailed' naming each record missing or wrong ('ReturnPathNotAssigned' for a domain
   * without one); a DNS failure throws a retriable InfrastructureError.
   */
  async verifyReturnPath(organizationId: string, domain: string): Promise<ReturnPathVerification> {
    const name = normalizeDomainName(domain);
    const state = await this.requireOrganization(organizationId);
    const current = state.domains.get(name);
    if (!current)
      throw new DomainError('DomainNotFound', `${name} is not a domain of the organization`, { domain: name });
    const host = current.returnPath?.host;
    const [mxRecords, txtRecords] = host
      ? await Promise.all([this.options.resolveMx(host), this.options.resolveTxt(host)])
      : [[], []];
    const events = await this.execute(
      organizationId,
      { type: 'VerifyReturnPath', data: { domain: name, mxRecords, txtRecords, service: this.dnsNames } },
      state,
    );
    const verified = events.find((event) => event.type === 'DomainReturnPathVerified');
    return {
      domain: this.domainSummary(name, verified ? domainStateOf(verified) : current),
      alreadyVerified: verified === undefined,
      found: { mx: mxRecords.map((r) => `${r.priority} ${r.exchange}`), txt: txtRecords.map(joinTxtRecord) },
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
    return domainSummary(name, domain, this.dnsNames);
  }

  // ── API keys ──────────────────────────────────────────────────────────────

  /**
   * Issues an API key (newApiKey). Only its SHA-256 enters the event and the view; the token is in the
   * result, once.
   */
  async issueApiKey(
    organizationId: string,
    input: { name: string; scopes: readonly string[]; mode: string },
  ): Promise<IssuedApiKey> {
    const { token, keyHash, keyPrefix: prefix } = newApiKey(input.mode);
    const [issued] = await this.execute(organizationId, {
      type: 'IssueApiKey',
      data: {
        keyId: this.newId(),
        name: input.name,
        scopes: input.scopes,
        mode: input.mode,
        keyHash,
        keyPrefix: prefix,
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
    const record = await this.view.apiKeyByHash(hashApiKey(token));
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

  private requireOrganization(organizationId: string): Promise<OrganizationState> {
    return requireOrganization(this.view, organizationId);
  }
}
