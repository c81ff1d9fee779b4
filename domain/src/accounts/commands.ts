import { eventMetadata } from '../decider';
import { DomainError } from '../domainError';
import { assertNever } from '../event';
import type { Command } from '../event';
import { isValidAllowance } from './allowance';
import { isKeyPrefix } from './apiKeys';
import {
  dkimPublicKeyBase64,
  hasVerificationRecord,
  joinTxtRecord,
  returnPathHost,
  returnPathProblems,
  verificationRecordName,
} from './dns';
import type { MxRecord, ServiceDnsNames, TxtRecord } from './dns';
import {
  domainSnapshot,
  requireOrganization,
  type AccountEvent,
  type DomainState,
  type OrganizationState,
} from './organization';
import {
  isApiKeyMode,
  isRole,
  isSha256Hex,
  normalizeDisplayName,
  normalizeDomainName,
  normalizeMemberEmail,
  validateScopes,
} from './rules';
import { decideInbound, type InboundCommand } from './inboundCommands';
import { decideWebhook, type WebhookCommand } from './webhookCommands';

/**
 * Commands of the organization aggregate and the decisions they lead to.
 *
 * Commands come from untyped input (the admin command line), so roles, modes and scopes are plain
 * strings here and the decider checks them. Secrets, key pairs, tokens and ids are made by the caller
 * and passed in: the decider never draws randomness, reads a clock or hashes.
 */

export type CreateOrganization = Command<'CreateOrganization', { name: string; adminEmail: string }>;
export type AddMember = Command<'AddMember', { email: string; role: string }>;
export type RemoveMember = Command<'RemoveMember', { email: string }>;
export type ChangeMemberRole = Command<'ChangeMemberRole', { email: string; role: string }>;
export type AddDomain = Command<
  'AddDomain',
  {
    domain: string;
    /** Random, 16..128 characters of A-Z a-z 0-9 - _. */
    verificationToken: string;
    dkimSelector: string;
    /** SPKI public key, PEM `PUBLIC KEY` or bare base64 DER. */
    dkimPublicKey: string;
    /** Opaque to the domain; encrypted by the caller. */
    dkimPrivateKeyEncrypted: string;
    /** The label of its return path, `<label>.<domain>` (the service's setting, fixed for the domain from now on). */
    returnPathLabel: string;
  }
>;
/** txtRecords: what the caller's DNS lookup of `_sendline.<domain>` found (none: an empty list). */
export type VerifyDomain = Command<'VerifyDomain', { domain: string; txtRecords: readonly TxtRecord[] }>;
/** Gives a domain added before return paths existed its return path `<label>.<domain>`. */
export type AssignReturnPath = Command<'AssignReturnPath', { domain: string; returnPathLabel: string }>;
/**
 * What the caller's DNS lookups of the domain's return path found (its MX and TXT records; none: empty lists), and
 * the service's names they must point to.
 */
export type VerifyReturnPath = Command<
  'VerifyReturnPath',
  { domain: string; mxRecords: readonly MxRecord[]; txtRecords: readonly TxtRecord[]; service: ServiceDnsNames }
>;
export type RemoveDomain = Command<'RemoveDomain', { domain: string }>;
export type IssueApiKey = Command<
  'IssueApiKey',
  {
    keyId: string;
    name: string;
    scopes: readonly string[];
    mode: string;
    /** SHA-256 of the token, lowercase hex, computed by the caller. */
    keyHash: string;
    /** keyPrefixForDisplay(token). */
    keyPrefix: string;
  }
>;
export type RevokeApiKey = Command<'RevokeApiKey', { keyId: string }>;
/** Messages per calendar month (UTC), a whole number ≥ 0; null = unlimited. */
export type SetAllowance = Command<'SetAllowance', { messagesPerMonth: number | null }>;

export type AccountCommand =
  | CreateOrganization
  | AddMember
  | RemoveMember
  | ChangeMemberRole
  | AddDomain
  | VerifyDomain
  | AssignReturnPath
  | VerifyReturnPath
  | RemoveDomain
  | IssueApiKey
  | RevokeApiKey
  | SetAllowance
  | WebhookCommand
  | InboundCommand;

export const ORGANIZATION_NAME_MAX_LENGTH = 100;
export const API_KEY_NAME_MAX_LENGTH = 100;

const VERIFICATION_TOKEN = /^[A-Za-z0-9_-]{16,128}$/;
const DKIM_SELECTOR = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const ID = /^[A-Za-z0-9_-]{1,100}$/;

function createOrganization(command: CreateOrganization, state: OrganizationState): AccountEvent[] {
  const { organizationId } = command.metadata;
  if (state.organization !== null) {
    throw new DomainError('OrganizationAlreadyExists', `organization ${organizationId} already exists`, {
      organizationId,
    });
  }
  if (typeof organizationId !== 'string' || !ID.test(organizationId)) {
    throw new DomainError('InvalidOrganizationId', `invalid organization id ${JSON.stringify(organizationId)}`);
  }
  const name = normalizeDisplayName(
    command.data.name,
    ORGANIZATION_NAME_MAX_LENGTH,
    'InvalidOrganizationName',
    'an organization name',
  );
  const adminEmail = normalizeMemberEmail(command.data.adminEmail);
  const metadata = eventMetadata(command.metadata);
  return [
    { type: 'OrganizationCreated', data: { organizationId, name, adminEmail }, metadata: metadata() },
    { type: 'MemberAdded', data: { email: adminEmail, role: 'admin' }, metadata: metadata() },
  ];
}

function addMember(command: AddMember, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const email = normalizeMemberEmail(command.data.email);
  const { role } = command.data;
  if (!isRole(role)) {
    throw new DomainError('InvalidRole', `role must be admin, developer or viewer, not ${JSON.stringify(role)}`);
  }
  if (state.members.has(email)) {
    throw new DomainError('MemberAlreadyExists', `${email} is already a member`, { email });
  }
  return [{ type: 'MemberAdded', data: { email, role }, metadata: eventMetadata(command.metadata)() }];
}

function removeMember(command: RemoveMember, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const email = normalizeMemberEmail(command.data.email);
  const member = state.members.get(email);
  if (!member) throw new DomainError('MemberNotFound', `${email} is not a member`, { email });
  if (member.role === 'admin') {
    const admins = [...state.members.values()].filter((m) => m.role === 'admin').length;
    if (admins <= 1) {
      throw new DomainError('CannotRemoveLastAdmin', `${email} is the organization's last admin`, { email });
    }
  }
  return [{ type: 'MemberRemoved', data: { email }, metadata: eventMetadata(command.metadata)() }];
}

/** The last admin can be neither removed nor demoted: an organization always has someone who can manage it. */
function changeMemberRole(command: ChangeMemberRole, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const email = normalizeMemberEmail(command.data.email);
  const { role } = command.data;
  if (!isRole(role)) {
    throw new DomainError('InvalidRole', `role must be admin, developer or viewer, not ${JSON.stringify(role)}`);
  }
  const member = state.members.get(email);
  if (!member) throw new DomainError('MemberNotFound', `${email} is not a member`, { email });
  if (member.role === role) return [];
  if (member.role === 'admin') {
    const admins = [...state.members.values()].filter((m) => m.role === 'admin').length;
    if (admins <= 1) {
      throw new DomainError('CannotRemoveLastAdmin', `${email} is the organization's last admin`, { email });
    }
  }
  return [
    {
      type: 'MemberRoleChanged',
      data: { email, role, previousRole: member.role, addedAt: member.addedAt },
      metadata: eventMetadata(command.metadata)(),
    },
  ];
}

function addDomain(command: AddDomain, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const domain = normalizeDomainName(command.data.domain);
  if (state.domains.has(domain)) {
    throw new DomainError('DomainAlreadyAdded', `${domain} is already a domain of the organization`, { domain });
  }
  const { verificationToken, dkimPublicKey, dkimPrivateKeyEncrypted } = command.data;
  if (typeof verificationToken !== 'string' || !VERIFICATION_TOKEN.test(verificationToken)) {
    throw new DomainError('InvalidVerificationToken', 'a verification token is 16..128 characters of A-Z a-z 0-9 - _');
  }
  const dkimSelector = typeof command.data.dkimSelector === 'string' ? command.data.dkimSelector.toLowerCase() : '';
  if (!DKIM_SELECTOR.test(dkimSelector) || dkimSelector.length > 200) {
    throw new DomainError('InvalidDkimSelector', `invalid DKIM selector ${JSON.stringify(command.data.dkimSelector)}`);
  }
  dkimPublicKeyBase64(dkimPublicKey);
  if (typeof dkimPrivateKeyEncrypted !== 'string' || dkimPrivateKeyEncrypted.length === 0) {
    throw new DomainError('InvalidDkimPrivateKey', 'the encrypted DKIM private key is missing');
  }
  const returnPath = { host: returnPathHost(domain, command.data.returnPathLabel), assignedAt: command.metadata.now };
  return [
    {
      type: 'DomainAdded',
      data: {
        domain,
        verificationToken,
        dkimSelector,
        dkimPublicKey,
        dkimPrivateKeyEncrypted,
        returnPath: { ...returnPath, verifiedAt: null },
      },
      metadata: eventMetadata(command.metadata)(),
    },
  ];
}

function requireDomain(domain: string, state: OrganizationState): DomainState {
  const current = state.domains.get(domain);
  if (!current) throw new DomainError('DomainNotFound', `${domain} is not a domain of the organization`, { domain });
  return current;
}

function verifyDomain(command: VerifyDomain, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const domain = normalizeDomainName(command.data.domain);
  const current = requireDomain(domain, state);
  if (current.verified) return [];
  const found = (command.data.txtRecords ?? []).map(joinTxtRecord);
  if (!hasVerificationRecord(found, current.verificationToken)) {
    const recordName = verificationRecordName(domain);
    throw new DomainError(
      'DomainVerificationFailed',
      found.length === 0
        ? `no TXT record found at ${recordName}`
        : `no TXT record at ${recordName} is the expected ownership value; found ${found.map((r) => JSON.stringify(r)).join(', ')}`,
      { domain, recordName, found },
    );
  }
  return [
    {
      type: 'DomainVerified',
      data: {
        domain,
        verificationToken: current.verificationToken,
        dkimSelector: current.dkimSelector,
        dkimPublicKey: current.dkimPublicKey,
        dkimPrivateKeyEncrypted: current.dkimPrivateKeyEncrypted,
        addedAt: current.addedAt,
        ...(current.returnPath && { returnPath: current.returnPath }),
      },
      metadata: eventMetadata(command.metadata)(),
    },
  ];
}

/**
 * A domain added before return paths existed gets one. Its host is fixed from then on: assigning the same host
 * again decides nothing; another one is refused (a changed label setting moves no domain silently).
 */
function assignReturnPath(command: AssignReturnPath, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const domain = normalizeDomainName(command.data.domain);
  const current = requireDomain(domain, state);
  const host = returnPathHost(domain, command.data.returnPathLabel);
  if (current.returnPath) {
    if (current.returnPath.host === host) return [];
    throw new DomainError(
      'ReturnPathAlreadyAssigned',
      `${domain} already has the return path ${current.returnPath.host}; it stays (not moved to ${host})`,
      { domain, host: current.returnPath.host, requested: host },
    );
  }
  return [
    {
      type: 'DomainReturnPathAssigned',
      data: domainSnapshot(domain, current, { host, assignedAt: command.metadata.now, verifiedAt: null }),
      metadata: eventMetadata(command.metadata)(),
    },
  ];
}

/**
 * Records that the return path's MX and SPF records are published as dnsRecordsFor asks (returnPathProblems).
 * Refused with 'ReturnPathVerificationFailed', naming each record missing or wrong; once verified, decides nothing.
 */
function verifyReturnPath(command: VerifyReturnPath, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const domain = normalizeDomainName(command.data.domain);
  const current = requireDomain(domain, state);
  const returnPath = current.returnPath;
  if (!returnPath) {
    throw new DomainError(
      'ReturnPathNotAssigned',
      `${domain} was added before return paths existed and has none yet: it must be assigned one first`,
      { domain },
    );
  }
  if (returnPath.verifiedAt !== null) return [];
  const { host } = returnPath;
  const mxRecords = command.data.mxRecords ?? [];
  const txtRecords = command.data.txtRecords ?? [];
  const problems = returnPathProblems(host, { mxRecords, txtRecords }, command.data.service);
  if (problems.length > 0) {
    throw new DomainError(
      'ReturnPathVerificationFailed',
      `return path ${host} not verified: ${problems.map((problem) => problem.message).join('; ')}`,
      {
        domain,
        host,
        problems,
        found: { mx: mxRecords.map((r) => `${r.priority} ${r.exchange}`), txt: txtRecords.map(joinTxtRecord) },
      },
    );
  }
  return [
    {
      type: 'DomainReturnPathVerified',
      data: domainSnapshot(domain, current, { ...returnPath, verifiedAt: command.metadata.now }),
      metadata: eventMetadata(command.metadata)(),
    },
  ];
}

function removeDomain(command: RemoveDomain, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const domain = normalizeDomainName(command.data.domain);
  if (!state.domains.has(domain)) {
    throw new DomainError('DomainNotFound', `${domain} is not a domain of the organization`, { domain });
  }
  return [{ type: 'DomainRemoved', data: { domain }, metadata: eventMetadata(command.metadata)() }];
}

function issueApiKey(command: IssueApiKey, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const { keyId, mode, keyHash, keyPrefix } = command.data;
  if (typeof keyId !== 'string' || !ID.test(keyId)) {
    throw new DomainError('InvalidApiKeyId', `invalid API key id ${JSON.stringify(keyId)}`);
  }
  if (state.apiKeys.has(keyId)) {
    throw new DomainError('ApiKeyAlreadyExists', `an API key with id ${keyId} exists`, { keyId });
  }
  const name = normalizeDisplayName(command.data.name, API_KEY_NAME_MAX_LENGTH, 'InvalidApiKeyName', 'an API key name');
  if (!isApiKeyMode(mode)) {
    throw new DomainError('InvalidApiKeyMode', `API key mode must be test or live, not ${JSON.stringify(mode)}`);
  }
  const scopes = validateScopes(command.data.scopes);
  if (!isSha256Hex(keyHash)) {
    throw new DomainError('InvalidKeyHash', 'the key hash must be a SHA-256 digest in lowercase hex');
  }
  if ([...state.apiKeys.values()].some((key) => key.keyHash === keyHash)) {
    throw new DomainError('DuplicateKeyHash', 'another API key of the organization has the same token');
  }
  if (!isKeyPrefix(keyPrefix, mode)) {
    throw new DomainError('InvalidKeyPrefix', `the key prefix must be the token's first 12 characters, sl_${mode}_…`);
  }
  return [
    {
      type: 'ApiKeyIssued',
      data: { keyId, name, scopes, mode, keyHash, keyPrefix },
      metadata: eventMetadata(command.metadata)(),
    },
  ];
}

/**
 * Revoking a key twice is refused ('ApiKeyAlreadyRevoked') rather than ignored: the admin asked to stop a
 * key that was already stopped, which may mean the wrong key id was given, and the refusal says so.
 * Nothing changes either way.
 */
function revokeApiKey(command: RevokeApiKey, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const { keyId } = command.data;
  const key = state.apiKeys.get(keyId);
  if (!key) throw new DomainError('ApiKeyNotFound', `no API key with id ${keyId}`, { keyId });
  if (key.revokedAt !== null) {
    throw new DomainError('ApiKeyAlreadyRevoked', `API key ${keyId} is already revoked`, {
      keyId,
      revokedAt: key.revokedAt,
    });
  }
  return [
    {
      type: 'ApiKeyRevoked',
      data: {
        keyId,
        name: key.name,
        scopes: [...key.scopes],
        mode: key.mode,
        keyHash: key.keyHash,
        keyPrefix: key.prefix,
        issuedAt: key.issuedAt,
      },
      metadata: eventMetadata(command.metadata)(),
    },
  ];
}

/** Setting the allowance it already has decides nothing. */
function setAllowance(command: SetAllowance, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const { messagesPerMonth } = command.data;
  if (!isValidAllowance(messagesPerMonth)) {
    throw new DomainError(
      'InvalidAllowance',
      `an allowance is a whole number of messages ≥ 0 or null (unlimited), not ${String(messagesPerMonth)}`,
    );
  }
  if (messagesPerMonth === state.allowance) return [];
  return [{ type: 'AllowanceSet', data: { messagesPerMonth }, metadata: eventMetadata(command.metadata)() }];
}

export function decideOrganization(command: AccountCommand, state: OrganizationState): AccountEvent[] {
  switch (command.type) {
    case 'CreateOrganization':
      return createOrganization(command, state);
    case 'AddMember':
      return addMember(command, state);
    case 'RemoveMember':
      return removeMember(command, state);
    case 'ChangeMemberRole':
      return changeMemberRole(command, state);
    case 'AddDomain':
      return addDomain(command, state);
    case 'VerifyDomain':
      return verifyDomain(command, state);
    case 'AssignReturnPath':
      return assignReturnPath(command, state);
    case 'VerifyReturnPath':
      return verifyReturnPath(command, state);
    case 'RemoveDomain':
      return removeDomain(command, state);
    case 'IssueApiKey':
      return issueApiKey(command, state);
    case 'RevokeApiKey':
      return revokeApiKey(command, state);
    case 'SetAllowance':
      return setAllowance(command, state);
    case 'CreateWebhook':
    case 'UpdateWebhook':
    case 'DeleteWebhook':
    case 'DisableWebhook':
      return decideWebhook(command, state);
    case 'ChangeServerSettings':
    case 'CreateInboundRule':
    case 'DeleteInboundRule':
    case 'VerifyInboundDomain':
      return decideInbound(command, state);
    default:
      return assertNever(command);
  }
}
