import { DomainError } from '../domainError';
import type { DomainEvent } from '../event';
import { isValidDomainName, normalizeDomainName } from './rules';
import { MX_PRIORITY, type DnsRecord, type MxRecord } from './dns';
import type { WebhookHttpAuth } from './webhooks';

/**
 * An organization's inbound mail (Postmark's inbound stream): its server settings (the inbound address, where the
 * parsed mail is POSTed, the raw mail in it or not) and its inbound rules (a block list of senders). Part of the
 * organization aggregate, like its webhooks; the decisions are here, the folding in organization.ts.
 *
 * The inbound address is `{inboundHash}@{the service's inbound domain}`; `{inboundHash}+{anything}@…` delivers too,
 * with `anything` given back as MailboxHash. The hash is drawn by the caller (a keyed digest of the organization's
 * id, so deciding it twice gives the same) and fixed by the first ServerSettingsChanged. The commands and their
 * decisions are in inboundCommands.ts.
 */

/** The server settings, whole, as ServerSettingsChanged carries them (compaction keeps only the last). */
export interface ServerSettings {
  /** 32 lowercase hex characters: the local part of the inbound address. */
  inboundHash: string;
  /** Where each inbound message is POSTed as Postmark's JSON; '' = nowhere (the message is recorded only). */
  inboundHookUrl: string;
  /**
   * The organization's own inbound domain ('' = none). Mail to any address there is the organization's inbound
   * mail once the domain is verified (its MX found pointing to the service's mail host: VerifyInboundDomain).
   */
  inboundDomain: string;
  /** When the inbound domain's MX was found (VerifyInboundDomain); absent: not verified (or no domain). */
  inboundDomainVerifiedAt?: number;
  /** Postmark's InboundSpamThreshold (0 = off). No spam score is computed yet: stored and shown only. */
  inboundSpamThreshold: number;
  /** Whether RawEmail (the whole message as received) is in the JSON posted. */
  rawEmailEnabled: boolean;
  /** The secret the inbound hook's calls are signed with (as a webhook's), sealed by the caller. */
  inboundHookSigningSecretSealed: string;
  /**
   * HTTP Basic credentials given in the hook URL (`https://user:password@host/…`, as Postmark's inbound users write
   * them), kept apart from the URL with the password sealed by the caller; absent: none.
   */
  inboundHookHttpAuth?: WebhookHttpAuth;
}

export type ServerSettingsChanged = DomainEvent<'ServerSettingsChanged', ServerSettings>;

/** Postmark's inbound rule: a sender address or a whole domain whose mail is blocked. */
export interface InboundRule {
  ruleId: number;
  rule: string;
}
export type InboundRuleCreated = DomainEvent<'InboundRuleCreated', InboundRule>;
export type InboundRuleDeleted = DomainEvent<'InboundRuleDeleted', { ruleId: number }>;

export type InboundEvent = ServerSettingsChanged | InboundRuleCreated | InboundRuleDeleted;

const INBOUND_HASH = /^[0-9a-f]{32}$/;
/** Postmark's scale is 0..30 (SpamAssassin points); we take whole numbers 0..100. */
export const INBOUND_SPAM_THRESHOLD_MAX = 100;
export const INBOUND_RULE_MAX_LENGTH = 254;
/** Rule ids are positive integers (Postmark's clients type them as numbers), drawn by the caller. */
export const INBOUND_RULE_ID_MAX = 2 ** 31 - 1;
/** At most this many rules per organization (the block list is read for every inbound message). */
export const MAX_INBOUND_RULES = 1000;

export function isInboundHash(value: unknown): value is string {
  return typeof value === 'string' && INBOUND_HASH.test(value);
}

/** `{hash}@{domain}`. */
export function inboundAddress(inboundHash: string, inboundDomain: string): string {
  return `${inboundHash}@${inboundDomain.toLowerCase()}`;
}

/**
 * The inbound hash and mailbox hash of a recipient at the service's inbound domain, or null when it is not an
 * inbound address there (another domain, a local part that is no hash). Case-insensitive; the mailbox hash keeps
 * its case.
 */
export function inboundRecipientOf(
  address: string,
  serviceInboundDomain: string,
): { inboundHash: string; mailboxHash: string } | null {
  const at = address.lastIndexOf('@');
  if (at <= 0) return null;
  if (address.slice(at + 1).toLowerCase() !== serviceInboundDomain.toLowerCase()) return null;
  const local = address.slice(0, at);
  const plus = local.indexOf('+');
  const hash = (plus === -1 ? local : local.slice(0, plus)).toLowerCase();
  if (!INBOUND_HASH.test(hash)) return null;
  return { inboundHash: hash, mailboxHash: plus === -1 ? '' : local.slice(plus + 1) };
}

/**
 * The mailbox hash of a recipient at an organization's own inbound domain: what follows the first `+` of its local
 * part (case kept), '' without one. Any local part delivers there.
 */
export function mailboxHashOf(address: string): string {
  const at = address.lastIndexOf('@');
  const local = at < 0 ? address : address.slice(0, at);
  const plus = local.indexOf('+');
  return plus === -1 ? '' : local.slice(plus + 1);
}

/** The domain of an address, lowercased, without a trailing dot ('' without one). */
export function domainOfAddress(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0
    ? ''
    : address
        .slice(at + 1)
        .toLowerCase()
        .replace(/\.$/, '');
}

/** A rule as stored: an address (lowercased) or a domain name (lowercased). Throws 'InvalidInboundRule'. */
export function normalizeInboundRule(input: unknown): string {
  const invalid = () =>
    new DomainError('InvalidInboundRule', `The Rule ${JSON.stringify(input)} is not an email address or a domain.`);
  if (typeof input !== 'string') throw invalid();
  const rule = input.trim().toLowerCase();
  if (rule.length === 0 || rule.length > INBOUND_RULE_MAX_LENGTH) throw invalid();
  const at = rule.lastIndexOf('@');
  if (at === -1) {
    if (!isValidDomainName(rule)) throw invalid();
    return normalizeDomainName(rule);
  }
  const local = rule.slice(0, at);
  // eslint-disable-next-line no-control-regex
  if (local.length === 0 || local.length > 64 || /[\s\u0000-\u001f<>()[\]\\,;:"]/.test(local)) throw invalid();
  if (!isValidDomainName(rule.slice(at + 1))) throw invalid();
  return `${local}@${normalizeDomainName(rule.slice(at + 1))}`;
}

/** The rule that blocks mail from `from` (an address), or undefined: an address rule matches it, a domain rule its domain. */
export function blockingInboundRule(rules: Iterable<InboundRule>, from: string): InboundRule | undefined {
  const address = from.trim().toLowerCase();
  const domain = address.slice(address.lastIndexOf('@') + 1);
  for (const rule of rules) {
    if (rule.rule === address || rule.rule === domain) return rule;
  }
  return undefined;
}

export function isInboundRuleId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= INBOUND_RULE_ID_MAX;
}

export function inboundRuleNotFound(ruleId: unknown): DomainError {
  return new DomainError('InboundRuleNotFound', `Inbound rule ${String(ruleId)} was not found.`, {
    ruleId: String(ruleId),
  });
}

/** The Kafka keys of the inbound events on the compacted accounts topic. */
export function inboundEventKey(event: InboundEvent): string {
  const organizationId = event.metadata.organizationId;
  switch (event.type) {
    case 'ServerSettingsChanged':
      return `server/${organizationId}`;
    case 'InboundRuleCreated':
    case 'InboundRuleDeleted':
      return `inboundrule/${organizationId}/${event.data.ruleId}`;
  }
}

/**
 * The record an organization publishes for its own inbound domain: `MX <domain> 10 <mail host>` (the service's MX,
 * the host every return path's MX names). Checked by VerifyInboundDomain.
 */
export function inboundDomainRecords(domain: string, mailHost: string): DnsRecord[] {
  return [
    {
      type: 'MX',
      name: normalizeDomainName(domain),
      value: normalizeDomainName(mailHost),
      priority: MX_PRIORITY,
      purpose: 'mx',
    },
  ];
}

/**
 * What is wrong with the MX records found at an inbound domain, in words that name the record to publish; none:
 * verified. Every MX must point to the mail host (another one would take part of the domain's mail).
 */
export function inboundDomainProblems(domain: string, mxRecords: readonly MxRecord[], mailHost: string): string[] {
  const name = normalizeDomainName(domain);
  const host = normalizeDomainName(mailHost);
  const publish = `publish MX ${name} ${MX_PRIORITY} ${host}`;
  const exchanges = mxRecords.map((record) => record.exchange.trim().toLowerCase().replace(/\.$/, ''));
  const others = [...new Set(exchanges.filter((exchange) => exchange !== host))];
  if (exchanges.length === 0) return [`no MX record found at ${name}; ${publish}`];
  if (others.length === exchanges.length) return [`the MX of ${name} is ${others.join(', ')}, not ${host}; ${publish}`];
  if (others.length > 0) return [`${name} also has MX records for ${others.join(', ')}; keep only ${host}`];
  return [];
}
