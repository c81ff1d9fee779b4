import { randomInt, randomUUID } from 'node:crypto';
import {
  DomainError,
  INBOUND_RULE_ID_MAX,
  inboundAddress,
  inboundRuleNotFound,
  organizationDecider,
  validateWebhookUrl,
  type AccountCommand,
  type AccountEvent,
  type DnsRecord,
  inboundDomainRecords,
  normalizeDomainName,
  type InboundRule,
  type OrganizationState,
  type ServerSettings,
} from '@sendline/domain';
import {
  checkDestination,
  CommandHandler,
  decryptSecret,
  encryptSecret,
  inboundHashOf,
  inboundHookSigningSecretOf,
  mailHostFromEnv,
  mxResolverFromEnv,
  nameBasedId,
  type AccountsView,
  type EventAppender,
  type HostResolver,
  type MxResolver,
} from '@sendline/infra';
import { requireOrganization } from '../accounts/service';

/**
 * An organization's inbound settings (Postmark's `/server`) and inbound rules (`/triggers/inboundRules`), each change
 * run through the organization decider (CommandHandler: decide on the view's state, append to the accounts topic,
 * apply to the view at once).
 *
 * The inbound address exists from the first read: an organization whose settings were never set gets them then
 * (the hash and the hook's signing secret are derived from its id under the secret key, and the event's id from
 * the organization, so two first reads at once append one event).
 */
export interface InboundSettingsOptions {
  store: EventAppender;
  view: AccountsView;
  secretKey: () => Buffer;
  /** The service's inbound domain (SENDLINE_INBOUND_DOMAIN). */
  inboundDomain: string;
  development: boolean;
  resolveHost: HostResolver;
  /**
   * The service's mail host: the MX an own inbound domain publishes, as return paths do; default
   * SENDLINE_MAIL_HOST (or its default).
   */
  mailHost?: string;
  /** MX lookups for the inbound domain's verification; default SENDLINE_DNS_SERVERS or the system's resolver. */
  resolveMx?: MxResolver;
  now?: () => number;
  newId?: () => string;
  newRuleId?: () => number;
  actor?: string;
}

/** The settings as shown: the address whole, the hook's signing secret opened. */
export interface ServerSettingsSummary {
  organizationId: string;
  name: string;
  inboundHash: string;
  inboundAddress: string;
  inboundHookUrl: string;
  inboundDomain: string;
  /** Whether the inbound domain's MX was found (mail to it is taken only then). */
  inboundDomainVerified: boolean;
  /** The records to publish for the inbound domain (an MX to the mail host); none without one. */
  inboundDomainRecords: DnsRecord[];
  inboundSpamThreshold: number;
  rawEmailEnabled: boolean;
  inboundHookSigningSecret: string;
}

export interface ServerSettingsInput {
  inboundHookUrl?: string | null;
  inboundDomain?: string | null;
  inboundSpamThreshold?: number;
  rawEmailEnabled?: boolean;
}

const FIRST_SETTINGS = 'sendline.server-settings.first';
/** What the hook URL's password is shown as; sent back, it keeps the password. */
export const HOOK_PASSWORD_MASK = '********';

/** The hook URL as shown: its credentials back in it, the password masked. */
function shownUrl(settings: ServerSettings): string {
  const auth = settings.inboundHookHttpAuth;
  if (!auth || settings.inboundHookUrl === '') return settings.inboundHookUrl;
  const url = new URL(settings.inboundHookUrl);
  url.username = encodeURIComponent(auth.username);
  url.password = HOOK_PASSWORD_MASK;
  return url.toString();
}
const ID_ATTEMPTS = 5;

export class InboundSettings {
  private readonly now: () => number;
  private readonly newId: () => string;
  private readonly newRuleId: () => number;
  private readonly commands: CommandHandler<OrganizationState, AccountCommand, AccountEvent>;
  private readonly mailHost: string;
  private resolveMx?: MxResolver;

  constructor(private readonly options: InboundSettingsOptions) {
    this.mailHost = options.mailHost ?? mailHostFromEnv();
    this.now = options.now ?? Date.now;
    this.newId = options.newId ?? randomUUID;
    this.newRuleId = options.newRuleId ?? (() => randomInt(1, INBOUND_RULE_ID_MAX + 1));
    this.commands = new CommandHandler({
      decider: organizationDecider,
      store: options.store,
      apply: (events) => options.view.apply(events),
    });
  }

  as(actor: string): InboundSettings {
    return new InboundSettings({ ...this.options, now: this.now, newId: this.newId, newRuleId: this.newRuleId, actor });
  }

  get inboundDomain(): string {
    return this.options.inboundDomain;
  }

  /** The organization's settings, set (with its inbound address) on the first read. */
  async get(organizationId: string): Promise<ServerSettingsSummary> {
    const state = await requireOrganization(this.options.view, organizationId);
    if (state.server) return this.summary(state, state.server);
    return this.change(organizationId, {}, state, nameBasedId(FIRST_SETTINGS, organizationId));
  }

  async update(organizationId: string, input: ServerSettingsInput): Promise<ServerSettingsSummary> {
    const state = await requireOrganization(this.options.view, organizationId);
    if (typeof input.inboundDomain === 'string' && input.inboundDomain !== '') {
      await this.requireUnclaimed(organizationId, input.inboundDomain);
    }
    const hook = input.inboundHookUrl ? this.credentialsApart(input.inboundHookUrl) : undefined;
    if (hook && hook.url !== state.server?.inboundHookUrl) {
      await this.requirePublicDestination(validateWebhookUrl(hook.url, this.options.development));
    }
    return this.change(
      organizationId,
      { ...input, ...(hook && { inboundHookUrl: hook.url }) },
      state,
      this.newId(),
      hook && { inboundHookHttpAuth: hook.auth },
    );
  }

  /**
   * Looks up the MX records of the organization's inbound domain and records it verified when they all point to the
   * mail host (ServerSettingsChanged with inboundDomainVerifiedAt). Refused with DomainError
   * 'InboundDomainVerificationFailed' naming the record to publish ('InboundDomainNotSet' without a domain); a
   * domain claimed meanwhile by another organization is refused ('InboundDomainTaken').
   */
  async verifyDomain(organizationId: string): Promise<ServerSettingsSummary> {
    const state = await requireOrganization(this.options.view, organizationId);
    const domain = state.server?.inboundDomain ?? '';
    if (domain !== '') await this.requireUnclaimed(organizationId, domain, true);
    this.resolveMx ??= this.options.resolveMx ?? mxResolverFromEnv();
    const mxRecords = domain === '' ? [] : await this.resolveMx(domain);
    const events = await this.execute(
      organizationId,
      { type: 'VerifyInboundDomain', data: { domain, mxRecords, mailHost: this.mailHost } },
      state,
      this.newId(),
    );
    const changed = events.find((event) => event.type === 'ServerSettingsChanged');
    return this.summary(state, changed?.data ?? state.server!);
  }

  /**
   * One inbound domain, one organization: refused when it is another's inbound domain (its current settings naming
   * it), the service's own (its inbound domain, its mail host, or under them), a return path, or another
   * organization's sending domain or under one (an MX to the mail host proves no ownership: every return path has
   * one, and so had the domains of before return paths).
   */
  private async requireUnclaimed(organizationId: string, domain: string, verifying = false): Promise<void> {
    let name: string;
    try {
      name = normalizeDomainName(domain);
    } catch {
      return; // the decider refuses it as invalid
    }
    const taken = (why: string) =>
      new DomainError('InboundDomainTaken', `The InboundDomain ${name} ${why}.`, { domain: name });
    const service = [this.options.inboundDomain, this.mailHost].map((host) => host.toLowerCase());
    if (service.some((host) => name === host || name.endsWith(`.${host}`))) throw taken("is the service's own");
    const owner = await this.options.view.inboundDomainOwner(name);
    // Two that set it at the same instant both passed this check: the first to verify it owns it.
    if (owner && owner.organizationId !== organizationId && (owner.verified || !verifying)) {
      throw taken("is already another server's inbound domain");
    }
    // Its MX points to the mail host too, but mail there is bounces; and another's domain is not ours to take.
    for (const claim of await this.options.view.sendingDomainsOver(name)) {
      if (claim.returnPath) throw taken('is the return path of a sending domain');
      if (claim.organizationId !== organizationId) {
        throw taken(`is under ${claim.domain}, another organization's sending domain`);
      }
    }
  }

  /**
   * A hook URL as Postmark's users write it, `https://user:password@host/…`: the URL without its credentials, and the
   * credentials apart, the password sealed (the masked one shown back keeps the current password). A URL that does
   * not parse is passed on whole, for the domain's rule to refuse it.
   */
  private credentialsApart(input: string): {
    url: string;
    auth: { username: string; passwordSealed: string | null } | null;
  } {
    let parsed: URL;
    try {
      parsed = new URL(input);
    } catch {
      return { url: input, auth: null };
    }
    if (parsed.username === '' && parsed.password === '') return { url: input, auth: null };
    const decode = (value: string) => {
      try {
        return decodeURIComponent(value);
      } catch {
        return value;
      }
    };
    const username = decode(parsed.username);
    const password = decode(parsed.password);
    parsed.username = '';
    parsed.password = '';
    const passwordSealed =
      password === HOOK_PASSWORD_MASK ? null : password === '' ? '' : encryptSecret(password, this.options.secretKey());
    return { url: parsed.toString(), auth: { username, passwordSealed } };
  }

  async rules(organizationId: string): Promise<InboundRule[]> {
    await requireOrganization(this.options.view, organizationId);
    return this.options.view.inboundRules(organizationId);
  }

  async createRule(organizationId: string, rule: unknown): Promise<InboundRule> {
    const state = await requireOrganization(this.options.view, organizationId);
    for (let attempt = 1; ; attempt++) {
      const ruleId = this.newRuleId();
      try {
        const [created] = await this.execute(
          organizationId,
          { type: 'CreateInboundRule', data: { ruleId, rule: rule as string } },
          state,
          this.newId(),
        );
        if (created?.type !== 'InboundRuleCreated') throw new Error('CreateInboundRule decided no InboundRuleCreated');
        return { ...created.data };
      } catch (error) {
        if (error instanceof DomainError && error.code === 'InboundRuleIdTaken' && attempt < ID_ATTEMPTS) continue;
        throw error;
      }
    }
  }

  async deleteRule(organizationId: string, ruleId: number): Promise<void> {
    const state = await requireOrganization(this.options.view, organizationId);
    if (!state.inboundRules.has(ruleId)) throw inboundRuleNotFound(ruleId);
    await this.execute(organizationId, { type: 'DeleteInboundRule', data: { ruleId } }, state, this.newId());
  }

  private async change(
    organizationId: string,
    input: ServerSettingsInput,
    state: OrganizationState,
    eventId: string,
    credentials?: { inboundHookHttpAuth: { username: string; passwordSealed: string | null } | null },
  ): Promise<ServerSettingsSummary> {
    const key = this.options.secretKey();
    const events = await this.execute(
      organizationId,
      {
        type: 'ChangeServerSettings',
        data: {
          inboundHash: inboundHashOf(organizationId, key),
          signingSecretSealed: encryptSecret(inboundHookSigningSecretOf(organizationId, key), key),
          ...input,
          ...credentials,
          allowHttp: this.options.development,
        },
      },
      state,
      eventId,
    );
    const changed = events.find((event) => event.type === 'ServerSettingsChanged');
    const settings = changed?.data ?? state.server;
    if (!settings) throw new Error('ChangeServerSettings decided no settings');
    return this.summary(state, settings);
  }

  private summary(state: OrganizationState, settings: ServerSettings): ServerSettingsSummary {
    return {
      organizationId: state.organization!.id,
      name: state.organization!.name,
      inboundHash: settings.inboundHash,
      inboundAddress: inboundAddress(settings.inboundHash, this.options.inboundDomain),
      inboundHookUrl: shownUrl(settings),
      inboundDomain: settings.inboundDomain,
      inboundDomainVerified: settings.inboundDomain !== '' && settings.inboundDomainVerifiedAt !== undefined,
      inboundDomainRecords:
        settings.inboundDomain === '' ? [] : inboundDomainRecords(settings.inboundDomain, this.mailHost),
      inboundSpamThreshold: settings.inboundSpamThreshold,
      rawEmailEnabled: settings.rawEmailEnabled,
      inboundHookSigningSecret: decryptSecret(settings.inboundHookSigningSecretSealed, this.options.secretKey()),
    };
  }

  private execute(
    organizationId: string,
    command: Omit<AccountCommand, 'metadata'>,
    state: OrganizationState,
    eventId: string,
  ): Promise<AccountEvent[]> {
    return this.commands.handle(
      {
        ...command,
        metadata: {
          organizationId,
          now: this.now(),
          eventIds: [eventId],
          ...(this.options.actor !== undefined ? { actor: this.options.actor } : {}),
        },
      } as AccountCommand,
      state,
    );
  }

  /** In production: a hook URL whose host is, or resolves to, a non-public address is refused. */
  private async requirePublicDestination(url: string): Promise<void> {
    if (this.options.development) return;
    const verdict = await checkDestination(url, this.options.resolveHost);
    if (verdict.kind !== 'refused') return;
    throw new DomainError(
      'WebhookUrlNotAllowed',
      `The InboundHookUrl points to ${verdict.host}, a ${verdict.addressClass} address; hooks are only called on public addresses.`,
      { host: verdict.host, addressClass: verdict.addressClass },
    );
  }
}
