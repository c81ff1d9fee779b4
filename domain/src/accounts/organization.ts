import { DomainError } from '../domainError';
import { assertNever, type CommandMetadata, type DomainEvent } from '../event';
import type { ApiKeyMode, Role, Scope } from './rules';
import { inboundEventKey, type InboundEvent, type ServerSettings } from './inbound';
import { webhookEventKey, type WebhookDisabled, type WebhookEvent, type WebhookState } from './webhooks';

/**
 * The organization aggregate: events, state, initialOrganizationState and evolveOrganization (the decider
 * pieces; decideOrganization is in commands.ts).
 *
 * One aggregate per organization. Its members, domains, API keys and allowance are decided together,
 * because some rules span entities (the last admin cannot leave; a domain or key id exists once), and
 * the organization is the consistency boundary of the account. Its stream is every account event whose
 * metadata.organizationId is the organization's id.
 *
 * On Kafka, however, account events go to a *compacted* topic, and compaction keeps only the last event
 * per key. Keyed by organization id, compaction would drop everything but the organization's latest
 * event. So each event is keyed by the entity it changes (accountEventKey below), and each event carries
 * enough to rebuild its entity on its own:
 * - OrganizationCreated, MemberAdded, DomainAdded, ApiKeyIssued and AllowanceSet hold the whole entity;
 * - DomainVerified repeats the whole domain (with its DKIM keys), because it replaces DomainAdded under the
 *   domain's key: a DomainVerified that held only the name would lose the DKIM private key to compaction;
 *   DomainReturnPathAssigned and DomainReturnPathVerified likewise hold the whole domain (DomainSnapshot);
 * - ApiKeyRevoked likewise repeats the whole key (with its digest, so the key view can find and mark it);
 * - MemberRoleChanged repeats the whole member (with its addedAt), replacing MemberAdded under the member's key;
 * - WebhookCreated holds the whole webhook, and WebhookUpdated and WebhookDisabled repeat it (with its sealed
 *   secrets and createdAt);
 * - MemberRemoved, DomainRemoved and WebhookDeleted end their entity and need only its name or id.
 * evolveOrganization lets entities depend neither on each other's events nor on arriving in order
 * across keys (a compacted, partitioned topic keeps order per key only): a DomainVerified or ApiKeyRevoked
 * whose first event was compacted away rebuilds the entity from its own data.
 */

export type OrganizationCreated = DomainEvent<
  'OrganizationCreated',
  { organizationId: string; name: string; adminEmail: string }
>;
export type MemberAdded = DomainEvent<'MemberAdded', { email: string; role: Role }>;
export type MemberRemoved = DomainEvent<'MemberRemoved', { email: string }>;
/** The whole member again (see above), with the new role: it replaces MemberAdded under the member's key. */
export type MemberRoleChanged = DomainEvent<
  'MemberRoleChanged',
  { email: string; role: Role; previousRole: Role; addedAt: number }
>;

export interface DomainKeys {
  domain: string;
  verificationToken: string;
  dkimSelector: string;
  /** SPKI public key, PEM or base64 DER. */
  dkimPublicKey: string;
  /** The DKIM private key, encrypted by the caller; opaque to the domain. */
  dkimPrivateKeyEncrypted: string;
}
/**
 * A domain's return path: the domain of the envelope sender (`MAIL FROM:<b.{token}@{host}>`) of the mail it sends,
 * where bounces and complaints come back, as Amazon SES's custom MAIL FROM domain. It is a subdomain of the domain
 * (`{label}.{domain}`, publishing an MX to the service's mail host and an SPF record), so that SPF passes for an
 * address aligned (relaxed) with the From domain, for DMARC, and the domain's own MX is never touched.
 */
export interface ReturnPath {
  /** `{label}.{domain}`, fixed when assigned: changing the label setting later moves no domain. */
  host: string;
  /** When the domain got it: when it was added, or later for a domain added before return paths existed. */
  assignedAt: number;
  /** When its MX and SPF records were found (VerifyReturnPath); null until then. */
  verifiedAt: number | null;
}

/** returnPath: absent only in the events of domains added before return paths existed. */
export type DomainAdded = DomainEvent<'DomainAdded', DomainKeys & { returnPath?: ReturnPath }>;
/** The whole domain again (see above); verifiedAt is the event's occurredAt. */
export type DomainVerified = DomainEvent<'DomainVerified', DomainKeys & { addedAt: number; returnPath?: ReturnPath }>;
/** The whole domain, as the events that change its return path carry it (see above). */
export interface DomainSnapshot extends DomainKeys {
  addedAt: number;
  /** When the domain's ownership was verified; null while it is not. */
  verifiedAt: number | null;
  returnPath: ReturnPath;
}
/** A domain added before return paths existed gets one (its records to publish change). */
export type DomainReturnPathAssigned = DomainEvent<'DomainReturnPathAssigned', DomainSnapshot>;
/** The return path's MX and SPF records were found; returnPath.verifiedAt is the event's occurredAt. */
export type DomainReturnPathVerified = DomainEvent<'DomainReturnPathVerified', DomainSnapshot>;
export type DomainRemoved = DomainEvent<'DomainRemoved', { domain: string }>;

export interface ApiKeyData {
  keyId: string;
  name: string;
  scopes: Scope[];
  mode: ApiKeyMode;
  /** SHA-256 of the token, lowercase hex; the token itself is never stored. */
  keyHash: string;
  /** The token's first 12 characters, e.g. `sl_live_ab12`. */
  keyPrefix: string;
}
export type ApiKeyIssued = DomainEvent<'ApiKeyIssued', ApiKeyData>;
/** The whole key again (see above); revokedAt is the event's occurredAt. */
export type ApiKeyRevoked = DomainEvent<'ApiKeyRevoked', ApiKeyData & { issuedAt: number }>;
/** Messages per calendar month (UTC); null = unlimited. */
export type AllowanceSet = DomainEvent<'AllowanceSet', { messagesPerMonth: number | null }>;

export type AccountEvent =
  | OrganizationCreated
  | MemberAdded
  | MemberRemoved
  | MemberRoleChanged
  | DomainAdded
  | DomainVerified
  | DomainReturnPathAssigned
  | DomainReturnPathVerified
  | DomainRemoved
  | ApiKeyIssued
  | ApiKeyRevoked
  | AllowanceSet
  | WebhookEvent
  | InboundEvent;

export type AccountEventType = AccountEvent['type'];

export const ACCOUNT_EVENT_TYPES: readonly AccountEventType[] = [
  'OrganizationCreated',
  'MemberAdded',
  'MemberRemoved',
  'MemberRoleChanged',
  'DomainAdded',
  'DomainVerified',
  'DomainReturnPathAssigned',
  'DomainReturnPathVerified',
  'DomainRemoved',
  'ApiKeyIssued',
  'ApiKeyRevoked',
  'AllowanceSet',
  'WebhookCreated',
  'WebhookUpdated',
  'WebhookDeleted',
  'WebhookDisabled',
  'ServerSettingsChanged',
  'InboundRuleCreated',
  'InboundRuleDeleted',
];

export interface MemberState {
  role: Role;
  addedAt: number;
}

export interface DomainState {
  verificationToken: string;
  dkimSelector: string;
  dkimPublicKey: string;
  dkimPrivateKeyEncrypted: string;
  verified: boolean;
  verifiedAt: number | null;
  addedAt: number;
  /** null: the domain was added before return paths existed and has not been assigned one yet. */
  returnPath: ReturnPath | null;
}

export interface ApiKeyState {
  keyId: string;
  name: string;
  scopes: Scope[];
  mode: ApiKeyMode;
  keyHash: string;
  /** The token's first 12 characters. */
  prefix: string;
  issuedAt: number;
  /** null while active. */
  revokedAt: number | null;
}

export interface OrganizationState {
  organization: { id: string; name: string; createdAt: number } | null;
  /** Lowercased email → member. */
  members: ReadonlyMap<string, MemberState>;
  /** Lowercased domain name → domain. */
  domains: ReadonlyMap<string, DomainState>;
  /** Key id → key, revoked ones included. */
  apiKeys: ReadonlyMap<string, ApiKeyState>;
  /** Messages per calendar month (UTC); null = unlimited (also before any AllowanceSet). */
  allowance: number | null;
  /** Webhook id → webhook. */
  webhooks: ReadonlyMap<number, WebhookState>;
  /** The inbound server settings; null until first set (read or changed). */
  server: ServerSettings | null;
  /** Inbound rule id → the address or domain it blocks. */
  inboundRules: ReadonlyMap<number, string>;
}

export function initialOrganizationState(): OrganizationState {
  return {
    organization: null,
    members: new Map(),
    domains: new Map(),
    apiKeys: new Map(),
    allowance: null,
    webhooks: new Map(),
    server: null,
    inboundRules: new Map(),
  };
}

function withEntry<K, V>(map: ReadonlyMap<K, V>, key: K, value: V): Map<K, V> {
  const next = new Map(map);
  next.set(key, value);
  return next;
}

function withoutEntry<K, V>(map: ReadonlyMap<K, V>, key: K): Map<K, V> {
  const next = new Map(map);
  next.delete(key);
  return next;
}

export function evolveOrganization(state: OrganizationState, event: AccountEvent): OrganizationState {
  const at = event.metadata.occurredAt;
  switch (event.type) {
    case 'OrganizationCreated':
      return { ...state, organization: { id: event.data.organizationId, name: event.data.name, createdAt: at } };
    case 'MemberAdded':
      return { ...state, members: withEntry(state.members, event.data.email, { role: event.data.role, addedAt: at }) };
    case 'MemberRemoved':
      return { ...state, members: withoutEntry(state.members, event.data.email) };
    case 'MemberRoleChanged':
      return {
        ...state,
        members: withEntry(state.members, event.data.email, { role: event.data.role, addedAt: event.data.addedAt }),
      };
    case 'DomainAdded':
    case 'DomainVerified':
    case 'DomainReturnPathAssigned':
    case 'DomainReturnPathVerified':
      return { ...state, domains: withEntry(state.domains, event.data.domain, domainStateOf(event)) };
    case 'DomainRemoved':
      return { ...state, domains: withoutEntry(state.domains, event.data.domain) };
    case 'ApiKeyIssued': {
      const { keyPrefix, scopes, ...key } = event.data;
      return {
        ...state,
        apiKeys: withEntry(state.apiKeys, key.keyId, {
          ...key,
          scopes: [...scopes],
          prefix: keyPrefix,
          issuedAt: at,
          revokedAt: null,
        }),
      };
    }
    case 'ApiKeyRevoked': {
      const { keyPrefix, scopes, ...key } = event.data;
      return {
        ...state,
        apiKeys: withEntry(state.apiKeys, key.keyId, { ...key, scopes: [...scopes], prefix: keyPrefix, revokedAt: at }),
      };
    }
    case 'AllowanceSet':
      return { ...state, allowance: event.data.messagesPerMonth };
    case 'WebhookCreated':
      return {
        ...state,
        webhooks: withEntry(state.webhooks, event.data.webhookId, { ...event.data, createdAt: at, updatedAt: at }),
      };
    case 'WebhookUpdated':
      // Saving a webhook enables it again (a WebhookUpdated carries no `disabled`).
      return { ...state, webhooks: withEntry(state.webhooks, event.data.webhookId, { ...event.data, updatedAt: at }) };
    case 'WebhookDisabled':
      return { ...state, webhooks: withEntry(state.webhooks, event.data.webhookId, disabledWebhookState(event)) };
    case 'WebhookDeleted':
      return { ...state, webhooks: withoutEntry(state.webhooks, event.data.webhookId) };
    case 'ServerSettingsChanged':
      return { ...state, server: { ...event.data } };
    case 'InboundRuleCreated':
      return { ...state, inboundRules: withEntry(state.inboundRules, event.data.ruleId, event.data.rule) };
    case 'InboundRuleDeleted':
      return { ...state, inboundRules: withoutEntry(state.inboundRules, event.data.ruleId) };
    default: {
      // Every known type is handled above (the compiler checks it); an event type written by a newer
      // version leaves the state as it is, so an older reader can still fold the stream.
      const _unknown: never = event;
      return state;
    }
  }
}

/** The domain an event under the domain's key leaves: each of them holds the whole domain (see the top). */
export function domainStateOf(
  event: DomainAdded | DomainVerified | DomainReturnPathAssigned | DomainReturnPathVerified,
): DomainState {
  const at = event.metadata.occurredAt;
  const { verificationToken, dkimSelector, dkimPublicKey, dkimPrivateKeyEncrypted } = event.data;
  const keys = { verificationToken, dkimSelector, dkimPublicKey, dkimPrivateKeyEncrypted };
  switch (event.type) {
    case 'DomainAdded':
      return { ...keys, verified: false, verifiedAt: null, addedAt: at, returnPath: event.data.returnPath ?? null };
    case 'DomainVerified':
      return {
        ...keys,
        verified: true,
        verifiedAt: at,
        addedAt: event.data.addedAt,
        returnPath: event.data.returnPath ?? null,
      };
    case 'DomainReturnPathAssigned':
    case 'DomainReturnPathVerified': {
      const { addedAt, verifiedAt, returnPath } = event.data;
      return { ...keys, verified: verifiedAt !== null, verifiedAt, addedAt, returnPath: { ...returnPath } };
    }
    default:
      return assertNever(event);
  }
}

/** The whole domain, for an event that carries it (DomainSnapshot), with the return path given. */
export function domainSnapshot(domain: string, state: DomainState, returnPath: ReturnPath): DomainSnapshot {
  return {
    domain,
    verificationToken: state.verificationToken,
    dkimSelector: state.dkimSelector,
    dkimPublicKey: state.dkimPublicKey,
    dkimPrivateKeyEncrypted: state.dkimPrivateKeyEncrypted,
    addedAt: state.addedAt,
    verifiedAt: state.verifiedAt,
    returnPath,
  };
}

/** The webhook a WebhookDisabled leaves: the whole webhook, disabled since the event. */
export function disabledWebhookState(event: WebhookDisabled): WebhookState {
  const { failingSince, reason, notifyAdmins, ...webhook } = event.data;
  const at = event.metadata.occurredAt;
  return { ...webhook, updatedAt: at, disabled: { at, failingSince, reason, notifyAdmins: [...notifyAdmins] } };
}

/**
 * The Kafka key of an account event on the compacted accounts topic: the entity it changes
 * (see the comment at the top). Ids are UUIDs and names are lowercased DNS names or addresses,
 * none of which holds a '/'.
 */
export function accountEventKey(event: AccountEvent): string {
  const organizationId = event.metadata.organizationId;
  switch (event.type) {
    case 'OrganizationCreated':
      return `organization/${organizationId}`;
    case 'AllowanceSet':
      return `allowance/${organizationId}`;
    case 'MemberAdded':
    case 'MemberRemoved':
    case 'MemberRoleChanged':
      return `member/${organizationId}/${event.data.email}`;
    case 'DomainAdded':
    case 'DomainVerified':
    case 'DomainReturnPathAssigned':
    case 'DomainReturnPathVerified':
    case 'DomainRemoved':
      return `domain/${organizationId}/${event.data.domain}`;
    case 'ApiKeyIssued':
    case 'ApiKeyRevoked':
      return `apikey/${organizationId}/${event.data.keyId}`;
    case 'WebhookCreated':
    case 'WebhookUpdated':
    case 'WebhookDeleted':
    case 'WebhookDisabled':
      return webhookEventKey(organizationId, event.data.webhookId);
    case 'ServerSettingsChanged':
    case 'InboundRuleCreated':
    case 'InboundRuleDeleted':
      return inboundEventKey(event);
    default: {
      const unknown: never = event;
      throw new Error(`no key for account event ${JSON.stringify(unknown)}`);
    }
  }
}

/** Refuses a command for an organization that does not exist (yet, or any more). */
export function requireOrganization(command: { metadata: CommandMetadata }, state: OrganizationState): void {
  if (state.organization === null) {
    throw new DomainError('OrganizationNotFound', `organization ${command.metadata.organizationId} does not exist`, {
      organizationId: command.metadata.organizationId,
    });
  }
}
