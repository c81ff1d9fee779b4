import { eventMetadata } from '../decider';
import { DomainError } from '../domainError';
import type { Command } from '../event';
import {
  INBOUND_SPAM_THRESHOLD_MAX,
  inboundDomainProblems,
  inboundRuleNotFound,
  isInboundHash,
  isInboundRuleId,
  MAX_INBOUND_RULES,
  normalizeInboundRule,
  type ServerSettings,
} from './inbound';
import { requireOrganization, type AccountEvent, type OrganizationState } from './organization';
import type { MxRecord } from './dns';
import { isValidDomainName, normalizeDomainName } from './rules';
import { validateWebhookHttpAuth, validateWebhookUrl, type WebhookHttpAuth } from './webhooks';

/** The organization's inbound commands and their decisions (commands.ts hands them here). */

/**
 * A change to the server settings: a field left out keeps its value. `inboundHash` and `signingSecretSealed` are
 * used only the first time (the settings have none yet); after that the organization keeps its own.
 */
export type ChangeServerSettings = Command<
  'ChangeServerSettings',
  {
    inboundHash: string;
    signingSecretSealed: string;
    /** Without credentials; those given in it travel in inboundHookHttpAuth. */
    inboundHookUrl?: string | null;
    /** With a new inboundHookUrl: its credentials (null: none); a passwordSealed of null keeps the current password. */
    inboundHookHttpAuth?: { username: string; passwordSealed: string | null } | null;
    inboundDomain?: string | null;
    inboundSpamThreshold?: number;
    rawEmailEnabled?: boolean;
    /** Plain http accepted for the hook (the service runs in development). */
    allowHttp: boolean;
  }
>;
export type CreateInboundRule = Command<'CreateInboundRule', { ruleId: number; rule: string }>;
export type DeleteInboundRule = Command<'DeleteInboundRule', { ruleId: number }>;
/**
 * Records the organization's inbound domain as verified when the MX records the caller looked up there (mxRecords)
 * all point to the service's mail host. Refused with 'InboundDomainVerificationFailed' naming the record to publish,
 * 'InboundDomainNotSet' without a domain; already verified: no event.
 */
export type VerifyInboundDomain = Command<
  'VerifyInboundDomain',
  { domain: string; mxRecords: readonly MxRecord[]; mailHost: string }
>;
export type InboundCommand = ChangeServerSettings | CreateInboundRule | DeleteInboundRule | VerifyInboundDomain;

function changeServerSettings(command: ChangeServerSettings, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const data = command.data;
  const current = state.server;
  if (!current) {
    if (!isInboundHash(data.inboundHash)) {
      throw new DomainError('InvalidInboundHash', 'an inbound hash is 32 lowercase hex characters');
    }
    if (typeof data.signingSecretSealed !== 'string' || data.signingSecretSealed.length === 0) {
      throw new DomainError('InvalidWebhookSecret', 'the sealed signing secret is missing');
    }
  }
  const inboundHookUrl =
    data.inboundHookUrl === undefined
      ? (current?.inboundHookUrl ?? '')
      : data.inboundHookUrl === null || data.inboundHookUrl === ''
        ? ''
        : validateWebhookUrl(data.inboundHookUrl, data.allowHttp);
  let inboundDomain = current?.inboundDomain ?? '';
  if (data.inboundDomain !== undefined) {
    if (data.inboundDomain === null || data.inboundDomain === '') inboundDomain = '';
    else if (typeof data.inboundDomain === 'string' && isValidDomainName(data.inboundDomain)) {
      inboundDomain = normalizeDomainName(data.inboundDomain);
    } else {
      throw new DomainError(
        'InvalidInboundDomain',
        `The InboundDomain ${JSON.stringify(data.inboundDomain)} is invalid.`,
      );
    }
  }
  const threshold = data.inboundSpamThreshold ?? current?.inboundSpamThreshold ?? 0;
  if (!Number.isSafeInteger(threshold) || threshold < 0 || threshold > INBOUND_SPAM_THRESHOLD_MAX) {
    throw new DomainError(
      'InvalidInboundSpamThreshold',
      `InboundSpamThreshold must be a whole number 0..${INBOUND_SPAM_THRESHOLD_MAX}.`,
    );
  }
  let httpAuth: WebhookHttpAuth | undefined = current?.inboundHookHttpAuth;
  if (data.inboundHookUrl !== undefined) {
    const auth = inboundHookUrl === '' ? null : (data.inboundHookHttpAuth ?? null);
    if (auth === null) httpAuth = undefined;
    else {
      const passwordSealed =
        auth.passwordSealed ??
        (current?.inboundHookHttpAuth?.username === auth.username
          ? current.inboundHookHttpAuth.passwordSealed
          : undefined);
      if (passwordSealed === undefined) {
        throw new DomainError(
          'InvalidWebhookHttpAuth',
          'The InboundHookUrl password is required: there is none to keep.',
        );
      }
      httpAuth = validateWebhookHttpAuth({ username: auth.username, passwordSealed });
    }
  }
  // A domain kept keeps its verification; a new one starts unverified.
  const verifiedAt =
    inboundDomain !== '' && inboundDomain === current?.inboundDomain ? current.inboundDomainVerifiedAt : undefined;
  const next: ServerSettings = {
    inboundHash: current?.inboundHash ?? data.inboundHash,
    inboundHookUrl,
    inboundDomain,
    ...(verifiedAt !== undefined && { inboundDomainVerifiedAt: verifiedAt }),
    inboundSpamThreshold: threshold,
    rawEmailEnabled: data.rawEmailEnabled ?? current?.rawEmailEnabled ?? false,
    inboundHookSigningSecretSealed: current?.inboundHookSigningSecretSealed ?? data.signingSecretSealed,
    ...(httpAuth && { inboundHookHttpAuth: { ...httpAuth } }),
  };
  if (current && sameSettings(current, next)) return [];
  return [{ type: 'ServerSettingsChanged', data: next, metadata: eventMetadata(command.metadata)() }];
}

function sameSettings(a: ServerSettings, b: ServerSettings): boolean {
  return (
    a.inboundHash === b.inboundHash &&
    a.inboundHookUrl === b.inboundHookUrl &&
    a.inboundDomain === b.inboundDomain &&
    a.inboundDomainVerifiedAt === b.inboundDomainVerifiedAt &&
    a.inboundSpamThreshold === b.inboundSpamThreshold &&
    a.rawEmailEnabled === b.rawEmailEnabled &&
    a.inboundHookSigningSecretSealed === b.inboundHookSigningSecretSealed &&
    a.inboundHookHttpAuth?.username === b.inboundHookHttpAuth?.username &&
    a.inboundHookHttpAuth?.passwordSealed === b.inboundHookHttpAuth?.passwordSealed
  );
}

function createInboundRule(command: CreateInboundRule, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const { ruleId } = command.data;
  if (!isInboundRuleId(ruleId)) throw new DomainError('InvalidInboundRuleId', `invalid rule id ${String(ruleId)}`);
  if (state.inboundRules.has(ruleId)) {
    throw new DomainError('InboundRuleIdTaken', `an inbound rule with id ${ruleId} exists`, { ruleId });
  }
  const rule = normalizeInboundRule(command.data.rule);
  if ([...state.inboundRules.values()].some((existing) => existing === rule)) {
    throw new DomainError('InboundRuleAlreadyExists', `A rule for ${rule} already exists.`, { rule });
  }
  if (state.inboundRules.size >= MAX_INBOUND_RULES) {
    throw new DomainError('TooManyInboundRules', `An organization has at most ${MAX_INBOUND_RULES} inbound rules.`);
  }
  return [{ type: 'InboundRuleCreated', data: { ruleId, rule }, metadata: eventMetadata(command.metadata)() }];
}

function deleteInboundRule(command: DeleteInboundRule, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const { ruleId } = command.data;
  if (!state.inboundRules.has(ruleId)) throw inboundRuleNotFound(ruleId);
  return [{ type: 'InboundRuleDeleted', data: { ruleId }, metadata: eventMetadata(command.metadata)() }];
}

function verifyInboundDomain(command: VerifyInboundDomain, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const current = state.server;
  if (!current || current.inboundDomain === '') {
    throw new DomainError('InboundDomainNotSet', 'The server has no InboundDomain to verify.');
  }
  if (normalizeDomainName(command.data.domain) !== current.inboundDomain) {
    throw new DomainError(
      'InboundDomainChanged',
      `The InboundDomain is ${current.inboundDomain}, not ${command.data.domain}: verify it again.`,
    );
  }
  const problems = inboundDomainProblems(current.inboundDomain, command.data.mxRecords, command.data.mailHost);
  if (problems.length > 0) {
    throw new DomainError(
      'InboundDomainVerificationFailed',
      `The InboundDomain ${current.inboundDomain} is not verified: ${problems.join('; ')}.`,
      { domain: current.inboundDomain, problems },
    );
  }
  if (current.inboundDomainVerifiedAt !== undefined) return [];
  const metadata = eventMetadata(command.metadata)();
  return [
    {
      type: 'ServerSettingsChanged',
      data: { ...current, inboundDomainVerifiedAt: metadata.occurredAt },
      metadata,
    },
  ];
}

export function decideInbound(command: InboundCommand, state: OrganizationState): AccountEvent[] {
  switch (command.type) {
    case 'ChangeServerSettings':
      return changeServerSettings(command, state);
    case 'CreateInboundRule':
      return createInboundRule(command, state);
    case 'DeleteInboundRule':
      return deleteInboundRule(command, state);
    case 'VerifyInboundDomain':
      return verifyInboundDomain(command, state);
  }
}
