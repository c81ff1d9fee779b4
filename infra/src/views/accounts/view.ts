import {
  disabledWebhookState,
  INBOUND_HOOK_ID,
  noWebhookTriggers,
  domainStateOf,
  initialOrganizationState,
  webhookConfig,
  type AccountEvent,
  type ApiKeyRecord,
  type ApiKeyState,
  type DomainState,
  type MemberState,
  type OrganizationState,
  type Scope,
  type ServerSettings,
  type InboundRule,
  type WebhookConfig,
  type WebhookState,
} from '@sendline/domain';
import type { Redis } from 'ioredis';
import { AuditView, type AuditEntry } from '../audit/view';
import type { ViewWriter } from '../positions';

type EntityKind = 'members' | 'domains' | 'keys' | 'webhooks' | 'inboundrules';

/** What the API needs to authenticate a request, read in one round trip by the key's hash. */
export interface StoredApiKey extends ApiKeyRecord {
  prefix: string;
}

export interface OrganizationRecord {
  id: string;
  name: string;
  createdAt: number;
  messagesPerMonth: number | null;
}

/** A domain as the view holds it; written before return paths existed, it has none (null). */
function domainFromJson(json: string): DomainState {
  const domain = JSON.parse(json) as DomainState;
  return { ...domain, returnPath: domain.returnPath ?? null };
}

/**
 * The accounts view in Redis, built from the `accounts` topic. Every event sets
 * an entity's whole latest state (the topic is compacted per entity and its events
 * carry the entity's state), so applying an event twice changes nothing.
 *
 *   <ns>:{accounts}:apikey:<sha256>          hash: the key record the API authenticates with
 *   <ns>:{accounts}:org:<id>                 hash: name, createdAt, messagesPerMonth
 *   <ns>:{accounts}:org:<id>:members|domains|keys|webhooks   hash: entity id → JSON state
 *                                            (webhooks: HttpAuth's password and the signing secret stay sealed)
 *   <ns>:{accounts}:organizations            set of organization ids
 *   <ns>:{accounts}:org:<id> field `server`  the inbound server settings (JSON; the hook's signing secret stays sealed)
 *   <ns>:{accounts}:org:<id>:inboundrules    hash: rule id → the address or domain it blocks
 *   <ns>:{accounts}:inbound                  hash: inbound hash → the organization whose inbound address it is (the MX's lookup)
 *   <ns>:{accounts}:inbounddomain:<domain>   set: the organizations that have set this own inbound domain (checked against their settings)
 *
 * `{accounts}` is the view's hash tag: on a Redis Cluster the view's keys and its positions are in one slot, so the
 * projector's guarded script (several organizations' keys and the position at once) is allowed.
 *
 * The audit (`<ns>:{audit}:<id>`) is the audit view's (../audit/), projected from the never-compacted history
 * topic; this view writes it only when applying a command's own events at once (`apply`), so the console shows the
 * change on its Audit page before the projector has copied it.
 */
export class AccountsView {
  private readonly auditView: AuditView;

  constructor(
    private readonly redis: Redis,
    readonly namespace = 'sl',
  ) {
    this.auditView = new AuditView(redis, namespace);
  }

  apiKeyKey(keyHash: string): string {
    return `${this.namespace}:{accounts}:apikey:${keyHash}`;
  }
  organizationKey(id: string): string {
    return `${this.namespace}:{accounts}:org:${id}`;
  }
  private entitiesKey(id: string, kind: EntityKind): string {
    return `${this.namespace}:{accounts}:org:${id}:${kind}`;
  }
  get inboundAddressesKey(): string {
    return `${this.namespace}:{accounts}:inbound`;
  }
  /** The organizations that have set this own inbound domain (`*`: every such key, for a rebuild). */
  inboundDomainKey(domain: string): string {
    return `${this.namespace}:{accounts}:inbounddomain:${domain}`;
  }
  get organizationsKey(): string {
    return `${this.namespace}:{accounts}:organizations`;
  }

  /** Applies events at once, without a position (the console reading its own write right after the broker's ack). */
  async apply(events: readonly AccountEvent[]): Promise<void> {
    if (events.length === 0) return;
    const p = this.redis.pipeline();
    for (const event of events) {
      this.write(p, event);
      this.auditView.write(p, event);
    }
    const results = await p.exec();
    const failed = results?.find(([error]) => error);
    if (failed?.[0]) throw failed[0];
  }

  /** The view's writes for one event (the projector adds them to its batch, with the view's position); no audit. */
  write(p: ViewWriter, event: AccountEvent): void {
    const org = event.metadata.organizationId;
    const at = event.metadata.occurredAt;
    switch (event.type) {
      case 'OrganizationCreated':
        p.hset(this.organizationKey(org), 'id', org);
        p.hset(this.organizationKey(org), 'name', event.data.name);
        p.hset(this.organizationKey(org), 'createdAt', String(at));
        p.sadd(this.organizationsKey, org);
        break;
      case 'MemberAdded':
        p.hset(
          this.entitiesKey(org, 'members'),
          event.data.email,
          JSON.stringify({ role: event.data.role, addedAt: at } satisfies MemberState),
        );
        break;
      case 'MemberRemoved':
        p.hdel(this.entitiesKey(org, 'members'), event.data.email);
        break;
      case 'MemberRoleChanged':
        p.hset(
          this.entitiesKey(org, 'members'),
          event.data.email,
          JSON.stringify({ role: event.data.role, addedAt: event.data.addedAt } satisfies MemberState),
        );
        break;
      case 'DomainAdded':
      case 'DomainVerified':
      case 'DomainReturnPathAssigned':
      case 'DomainReturnPathVerified':
        p.hset(this.entitiesKey(org, 'domains'), event.data.domain, JSON.stringify(domainStateOf(event)));
        break;
      case 'DomainRemoved':
        p.hdel(this.entitiesKey(org, 'domains'), event.data.domain);
        break;
      case 'ApiKeyIssued':
      case 'ApiKeyRevoked': {
        const revoked = event.type === 'ApiKeyRevoked';
        const { keyPrefix, ...key } = event.data;
        const issuedAt = event.type === 'ApiKeyRevoked' ? event.data.issuedAt : at;
        const state: ApiKeyState = {
          keyId: key.keyId,
          name: key.name,
          scopes: key.scopes,
          mode: key.mode,
          keyHash: key.keyHash,
          prefix: keyPrefix,
          issuedAt,
          revokedAt: revoked ? at : null,
        };
        p.hset(this.entitiesKey(org, 'keys'), key.keyId, JSON.stringify(state));
        const record = {
          keyId: key.keyId,
          organizationId: org,
          name: key.name,
          mode: key.mode,
          scopes: key.scopes.join(','),
          prefix: keyPrefix,
          revoked: revoked ? '1' : '0',
        };
        for (const [field, value] of Object.entries(record)) p.hset(this.apiKeyKey(key.keyHash), field, value);
        break;
      }
      case 'AllowanceSet':
        p.hset(
          this.organizationKey(org),
          'messagesPerMonth',
          event.data.messagesPerMonth === null ? '' : String(event.data.messagesPerMonth),
        );
        break;
      case 'WebhookCreated':
      case 'WebhookUpdated': {
        const { createdAt, ...data } = event.type === 'WebhookUpdated' ? event.data : { ...event.data, createdAt: at };
        const state: WebhookState = { ...data, createdAt, updatedAt: at };
        p.hset(this.entitiesKey(org, 'webhooks'), String(data.webhookId), JSON.stringify(state));
        break;
      }
      case 'WebhookDisabled':
        p.hset(
          this.entitiesKey(org, 'webhooks'),
          String(event.data.webhookId),
          JSON.stringify(disabledWebhookState(event)),
        );
        break;
      case 'WebhookDeleted':
        p.hdel(this.entitiesKey(org, 'webhooks'), String(event.data.webhookId));
        break;
      case 'ServerSettingsChanged':
        p.hset(this.organizationKey(org), 'server', JSON.stringify(event.data));
        p.hset(this.inboundAddressesKey, event.data.inboundHash, org);
        // Every organization that ever set a domain; the readers keep those whose current settings name it, so the
        // answer does not hang on the order of events of different organizations (a replay's).
        if (event.data.inboundDomain !== '') p.sadd(this.inboundDomainKey(event.data.inboundDomain), org);
        break;
      case 'InboundRuleCreated':
        p.hset(this.entitiesKey(org, 'inboundrules'), String(event.data.ruleId), event.data.rule);
        break;
      case 'InboundRuleDeleted':
        p.hdel(this.entitiesKey(org, 'inboundrules'), String(event.data.ruleId));
        break;
      default: {
        const _exhaustive: never = event;
        throw new Error(`unknown account event ${JSON.stringify(_exhaustive)}`);
      }
    }
  }

  /** The key record for a key's SHA-256 hash, or null. One round trip. */
  async apiKeyByHash(keyHash: string): Promise<StoredApiKey | null> {
    const record = await this.redis.hgetall(this.apiKeyKey(keyHash));
    if (!record.keyId || !record.organizationId) return null;
    return {
      keyId: record.keyId,
      organizationId: record.organizationId,
      name: record.name ?? '',
      mode: record.mode === 'live' ? 'live' : 'test',
      scopes: (record.scopes ? record.scopes.split(',') : []) as Scope[],
      prefix: record.prefix ?? '',
      revoked: record.revoked === '1',
    };
  }

  async organization(id: string): Promise<OrganizationRecord | null> {
    const record = await this.redis.hgetall(this.organizationKey(id));
    if (!record.id) return null;
    return {
      id: record.id,
      name: record.name ?? '',
      createdAt: Number(record.createdAt ?? 0),
      messagesPerMonth: record.messagesPerMonth ? Number(record.messagesPerMonth) : null,
    };
  }

  async domain(organizationId: string, domain: string): Promise<DomainState | null> {
    const json = await this.redis.hget(this.entitiesKey(organizationId, 'domains'), domain.toLowerCase());
    return json ? domainFromJson(json) : null;
  }

  async domains(organizationId: string): Promise<Map<string, DomainState>> {
    const all = await this.entities<DomainState>(organizationId, 'domains');
    return new Map([...all].map(([name, domain]) => [name, { ...domain, returnPath: domain.returnPath ?? null }]));
  }

  /**
   * The return-path hosts (`bounces.<domain>`, lowercase, verified or not) of every organization's sending domains,
   * in two round trips: what the MX takes return-path mail for. The view has no index by host; callers cache the
   * answer briefly.
   */
  async allReturnPathHosts(): Promise<Set<string>> {
    const ids = await this.organizations();
    const hosts = new Set<string>();
    if (ids.length === 0) return hosts;
    const p = this.redis.pipeline();
    for (const id of ids) p.hvals(this.entitiesKey(id, 'domains'));
    for (const [error, domains] of (await p.exec()) ?? []) {
      if (error) throw error;
      for (const json of domains as string[]) {
        const host = domainFromJson(json).returnPath?.host;
        if (host) hosts.add(host.toLowerCase());
      }
    }
    return hosts;
  }

  async members(organizationId: string): Promise<Map<string, MemberState>> {
    return this.entities<MemberState>(organizationId, 'members');
  }

  async apiKeys(organizationId: string): Promise<Map<string, ApiKeyState>> {
    return this.entities<ApiKeyState>(organizationId, 'keys');
  }

  /** One webhook of the organization, by id, or null. */
  async webhook(organizationId: string, webhookId: number): Promise<WebhookState | null> {
    const json = await this.redis.hget(this.entitiesKey(organizationId, 'webhooks'), String(webhookId));
    return json ? (JSON.parse(json) as WebhookState) : null;
  }

  /**
   * Every webhook of the organization, oldest first (the order the API lists them in), with what the webhook
   * dispatcher needs to call each. One round trip.
   */
  async webhooks(organizationId: string): Promise<WebhookConfig[]> {
    const all = await this.webhookStates(organizationId);
    return [...all.values()]
      .sort((a, b) => a.createdAt - b.createdAt || a.webhookId - b.webhookId)
      .map((webhook) => webhookConfig(organizationId, webhook));
  }

  /** Webhook id → webhook, as the organization decider holds them. */
  async webhookStates(organizationId: string): Promise<Map<number, WebhookState>> {
    const all = await this.entities<WebhookState>(organizationId, 'webhooks');
    return new Map([...all.values()].map((webhook) => [webhook.webhookId, webhook]));
  }

  /** The organization's inbound server settings, or null before they were first set. */
  async serverSettings(organizationId: string): Promise<ServerSettings | null> {
    const json = await this.redis.hget(this.organizationKey(organizationId), 'server');
    return json ? (JSON.parse(json) as ServerSettings) : null;
  }

  /**
   * The organization's inbound hook as the webhooks process calls it: a webhook with id INBOUND_HOOK_ID, its
   * InboundHookUrl (enabled only when one is set) and signing secret (sealed), no headers, no triggers. Null before
   * the settings were first set.
   */
  async inboundHook(organizationId: string): Promise<WebhookConfig | null> {
    const settings = await this.serverSettings(organizationId);
    if (!settings) return null;
    return {
      webhookId: INBOUND_HOOK_ID,
      url: settings.inboundHookUrl,
      messageStream: 'outbound',
      httpAuth: settings.inboundHookHttpAuth ?? null,
      httpHeaders: [],
      triggers: noWebhookTriggers(),
      signingSecretSealed: settings.inboundHookSigningSecretSealed,
      createdAt: 0,
      updatedAt: 0,
      organizationId,
      enabled: settings.inboundHookUrl !== '',
    };
  }

  /** The organization whose inbound address has this hash (lowercase), or null. */
  async organizationOfInboundHash(inboundHash: string): Promise<string | null> {
    return this.redis.hget(this.inboundAddressesKey, inboundHash.toLowerCase());
  }

  /**
   * The sending domains that have a say over a name (lowercase) an organization wants as its own inbound domain: a
   * sending domain that is the name or a parent of it, and a return path whose host is the name, of every
   * organization (one round trip per organization list, as allReturnPathHosts; asked only when a domain is set).
   */
  async sendingDomainsOver(name: string): Promise<{ organizationId: string; domain: string; returnPath: boolean }[]> {
    const ids = await this.organizations();
    if (ids.length === 0) return [];
    const p = this.redis.pipeline();
    for (const id of ids) p.hgetall(this.entitiesKey(id, 'domains'));
    const found: { organizationId: string; domain: string; returnPath: boolean }[] = [];
    for (const [index, [error, domains]] of ((await p.exec()) ?? []).entries()) {
      if (error) throw error;
      for (const [domain, json] of Object.entries(domains as Record<string, string>)) {
        const lower = domain.toLowerCase();
        const host = domainFromJson(json).returnPath?.host?.toLowerCase();
        if (host === name) found.push({ organizationId: ids[index]!, domain: lower, returnPath: true });
        else if (name === lower || name.endsWith(`.${lower}`)) {
          found.push({ organizationId: ids[index]!, domain: lower, returnPath: false });
        }
      }
    }
    return found;
  }

  /**
   * The organization whose own inbound domain this is (lowercase) and whether it is verified, or null: the index's
   * claimant, when its current settings still name the domain.
   */
  async inboundDomainOwner(domain: string): Promise<{ organizationId: string; verified: boolean } | null> {
    const name = domain.toLowerCase().replace(/\.$/, '');
    const candidates = await this.redis.smembers(this.inboundDomainKey(name));
    const owners: { organizationId: string; verifiedAt: number }[] = [];
    for (const organizationId of candidates.sort()) {
      const settings = await this.serverSettings(organizationId);
      if (settings?.inboundDomain === name) {
        owners.push({ organizationId, verifiedAt: settings.inboundDomainVerifiedAt ?? Number.POSITIVE_INFINITY });
      }
    }
    // Two that set it at the same instant (both passed the check): the first verified owns it.
    const owner = owners.sort((a, b) => a.verifiedAt - b.verifiedAt)[0];
    return owner ? { organizationId: owner.organizationId, verified: Number.isFinite(owner.verifiedAt) } : null;
  }

  /** The organization whose VERIFIED own inbound domain this is, or null (what the MX and the inbound reader take). */
  async organizationOfInboundDomain(domain: string): Promise<string | null> {
    const owner = await this.inboundDomainOwner(domain);
    return owner?.verified ? owner.organizationId : null;
  }

  /** The organization's inbound rules, by id. */
  async inboundRules(organizationId: string): Promise<InboundRule[]> {
    const all = await this.redis.hgetall(this.entitiesKey(organizationId, 'inboundrules'));
    return Object.entries(all)
      .map(([id, rule]) => ({ ruleId: Number(id), rule }))
      .sort((a, b) => a.ruleId - b.ruleId);
  }

  /** The organization's audit, newest first: `count` entries from `offset`, and how many there are (the audit view's). */
  audit(organizationId: string, count: number, offset: number): Promise<{ total: number; entries: AuditEntry[] }> {
    return this.auditView.entries(organizationId, count, offset);
  }

  /** One member of an organization, or null. */
  async member(organizationId: string, email: string): Promise<MemberState | null> {
    const json = await this.redis.hget(this.entitiesKey(organizationId, 'members'), email.toLowerCase());
    return json ? (JSON.parse(json) as MemberState) : null;
  }

  /**
   * The organizations `email` is a member of (the console's sign-in), in one round trip over every organization's
   * members: the view has no index by address, and sign-in is rare next to everything else it serves.
   */
  async membershipsOf(email: string): Promise<{ organizationId: string; member: MemberState }[]> {
    const ids = await this.organizations();
    if (ids.length === 0) return [];
    const p = this.redis.pipeline();
    for (const id of ids) p.hget(this.entitiesKey(id, 'members'), email.toLowerCase());
    const results = (await p.exec()) ?? [];
    return ids.flatMap((organizationId, i) => {
      const [error, json] = results[i] ?? [null, null];
      if (error) throw error;
      return typeof json === 'string' ? [{ organizationId, member: JSON.parse(json) as MemberState }] : [];
    });
  }

  async organizations(): Promise<string[]> {
    return (await this.redis.smembers(this.organizationsKey)).sort();
  }

  /** The decider state of an organization, as the view knows it (what the console decides on). */
  async organizationState(id: string): Promise<OrganizationState> {
    const [organization, members, domains, apiKeys, webhooks, server, rules] = await Promise.all([
      this.organization(id),
      this.members(id),
      this.domains(id),
      this.apiKeys(id),
      this.webhookStates(id),
      this.serverSettings(id),
      this.inboundRules(id),
    ]);
    if (!organization) return initialOrganizationState();
    return {
      organization: { id: organization.id, name: organization.name, createdAt: organization.createdAt },
      members,
      domains,
      apiKeys,
      allowance: organization.messagesPerMonth,
      webhooks,
      server,
      inboundRules: new Map(rules.map((rule) => [rule.ruleId, rule.rule])),
    };
  }

  private async entities<T>(organizationId: string, kind: EntityKind): Promise<Map<string, T>> {
    const all = await this.redis.hgetall(this.entitiesKey(organizationId, kind));
    return new Map(
      Object.entries(all)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([id, json]) => [id, JSON.parse(json) as T]),
    );
  }
}
