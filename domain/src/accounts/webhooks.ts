import { DomainError } from '../domainError';
import type { DomainEvent } from '../event';

/**
 * An organization's webhooks: where the service POSTs what happened to its messages (Postmark's webhooks, one
 * configuration per URL and message stream). The webhooks are part of the organization aggregate (their limit and
 * their ids are rules over all of them); this file holds their events, their state and the value rules a
 * configuration must meet. The decisions are in commands.ts, the folding in organization.ts.
 *
 * Secrets never reach the domain in the clear: the signing secret and an HTTP Basic password are sealed by the
 * caller (as a DKIM private key is), and the domain only keeps and hands back the sealed strings.
 */

/** The only message stream today; a webhook names the stream whose events it receives. */
export const WEBHOOK_MESSAGE_STREAMS = ['outbound'] as const;
export type WebhookMessageStream = (typeof WEBHOOK_MESSAGE_STREAMS)[number];

/** Postmark's limit: ten webhooks per message stream. */
export const MAX_WEBHOOKS_PER_STREAM = 10;
export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_MAX_HEADERS = 20;
export const WEBHOOK_HEADER_NAME_MAX_LENGTH = 256;
export const WEBHOOK_HEADER_VALUE_MAX_LENGTH = 2048;
export const WEBHOOK_USERNAME_MAX_LENGTH = 256;
/** Webhook ids are Postmark's: positive integers (clients type them as numbers), drawn by the caller. */
export const WEBHOOK_ID_MAX = 2 ** 31 - 1;

/**
 * Headers the service sets itself on every call (the body's type and length, the signature of the Standard
 * Webhooks scheme, the connection's own): a configured header of one of these names would forge or break them.
 */
export const RESERVED_WEBHOOK_HEADERS = [
  'host',
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
  'user-agent',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
] as const;

/** What each trigger turns on. Open and Click are kept and shown but nothing produces them yet. */
export interface WebhookTriggers {
  delivery: { enabled: boolean };
  bounce: { enabled: boolean; includeContent: boolean };
  subscriptionChange: { enabled: boolean };
  open: { enabled: boolean; postFirstOpenOnly: boolean };
  click: { enabled: boolean };
  spamComplaint: { enabled: boolean; includeContent: boolean };
}
export type WebhookTriggerName = keyof WebhookTriggers;
export const WEBHOOK_TRIGGER_NAMES: readonly WebhookTriggerName[] = [
  'delivery',
  'bounce',
  'subscriptionChange',
  'open',
  'click',
  'spamComplaint',
];

/** A change to some triggers: an absent trigger or field is left as it is. */
export type WebhookTriggersChange = { [T in WebhookTriggerName]?: Partial<WebhookTriggers[T]> };

/** HTTP Basic credentials sent with every call; the password sealed by the caller. */
export interface WebhookHttpAuth {
  username: string;
  passwordSealed: string;
}

export interface WebhookHeader {
  name: string;
  value: string;
}

/** A whole webhook, as WebhookCreated and WebhookUpdated carry it (see organization.ts on compaction). */
export interface WebhookData {
  webhookId: number;
  url: string;
  messageStream: WebhookMessageStream;
  httpAuth: WebhookHttpAuth | null;
  httpHeaders: WebhookHeader[];
  triggers: WebhookTriggers;
  /** The secret every call is signed with (`whsec_…`), sealed by the caller; shown once at creation. */
  signingSecretSealed: string;
}

export type WebhookCreated = DomainEvent<'WebhookCreated', WebhookData>;
/** The whole webhook again, so it survives compaction of its WebhookCreated; updatedAt is the event's occurredAt. */
export type WebhookUpdated = DomainEvent<'WebhookUpdated', WebhookData & { createdAt: number }>;
export type WebhookDeleted = DomainEvent<'WebhookDeleted', { webhookId: number }>;

/** Why and since when a webhook was disabled, and whom the service told (the organization's admins then). */
export interface WebhookDisabling {
  /** The first failure of the streak of failed calls that disabled it. */
  failingSince: number;
  /** The last call's failure, e.g. `answered 500` or `no answer within 10 s`. */
  reason: string;
  /** The admins' addresses the notice goes to, decided with the disabling (see notifyAdmins). */
  notifyAdmins: string[];
}

/**
 * The webhook failed every call for the organization's allowed streak (24 hours): it is called no more until it is
 * saved again (a PUT). The whole webhook again, as WebhookUpdated, because it replaces it under the webhook's key
 * on the compacted accounts topic; disabledAt is the event's occurredAt.
 */
export type WebhookDisabled = DomainEvent<'WebhookDisabled', WebhookData & { createdAt: number } & WebhookDisabling>;
export type WebhookEvent = WebhookCreated | WebhookUpdated | WebhookDeleted | WebhookDisabled;

/** A webhook as the organization holds it. */
export interface WebhookState extends WebhookData {
  createdAt: number;
  updatedAt: number;
  /** Set while the webhook is disabled for failing (absent or null: enabled; old view entries have none). */
  disabled?: (WebhookDisabling & { at: number }) | null;
}

/** The default of the streak of failed calls that disables a webhook: 24 hours. */
export const WEBHOOK_DISABLE_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * When the webhook's current streak of failures began, counted for disabling it: the first failure the caller saw
 * since the last success (`failingSince`), but never before the webhook was last saved (created, changed or
 * re-enabled): saving it is the customer saying it is fixed, so failures before do not count against it.
 */
export function failureStreakStart(webhook: Pick<WebhookState, 'updatedAt'>, failingSince: number): number {
  return Math.max(failingSince, webhook.updatedAt);
}

/** Whether a streak of failures that began at `failingSince` has lasted `disableAfterMs` at `now` (and the webhook is not disabled yet). */
export function webhookFailedLongEnough(
  webhook: Pick<WebhookState, 'updatedAt' | 'disabled'>,
  failingSince: number,
  now: number,
  disableAfterMs: number,
): boolean {
  return !webhook.disabled && now - failureStreakStart(webhook, failingSince) >= disableAfterMs;
}

/**
 * What the webhook dispatcher reads (from the accounts view) to call one webhook: the webhook as it stands, the
 * organization it belongs to, and `enabled`, false when no trigger is on or it is disabled for failing (such a
 * webhook is kept, never called).
 * HttpAuth's password and the signing secret stay sealed: only a holder of the secret key opens them.
 */
export interface WebhookConfig extends WebhookState {
  organizationId: string;
  enabled: boolean;
}

/** The trigger names a webhook can be called for today (the others are stored, shown and documented as not sent). */
export const PRODUCED_WEBHOOK_TRIGGERS: readonly WebhookTriggerName[] = ['delivery', 'bounce', 'subscriptionChange'];

export function webhookConfig(organizationId: string, webhook: WebhookState): WebhookConfig {
  return {
    ...webhook,
    organizationId,
    enabled: !webhook.disabled && WEBHOOK_TRIGGER_NAMES.some((name) => webhook.triggers[name].enabled),
  };
}

export function noWebhookTriggers(): WebhookTriggers {
  return {
    delivery: { enabled: false },
    bounce: { enabled: false, includeContent: false },
    subscriptionChange: { enabled: false },
    open: { enabled: false, postFirstOpenOnly: false },
    click: { enabled: false },
    spamComplaint: { enabled: false, includeContent: false },
  };
}

/** The Kafka key of a webhook's events: the organization and the webhook's id. */
export function webhookEventKey(organizationId: string, webhookId: number): string {
  return `webhook/${organizationId}/${webhookId}`;
}

export function isWebhookId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= WEBHOOK_ID_MAX;
}

/**
 * A webhook's URL: absolute, https (plain http only when the caller says the service runs in development),
 * with a host, no credentials (HttpAuth holds those, sealed), no fragment, at most 2048 characters. Returned as
 * given. Whether its host is a public address is the caller's check (it needs DNS). Throws 'InvalidWebhookUrl'.
 */
export function validateWebhookUrl(input: unknown, allowHttp: boolean): string {
  const invalid = (why: string) =>
    new DomainError('InvalidWebhookUrl', `The webhook Url ${why}.`, { url: typeof input === 'string' ? input : '' });
  if (typeof input !== 'string' || input.length === 0) throw invalid('is required');
  if (input.length > WEBHOOK_URL_MAX_LENGTH) throw invalid(`must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`);
  if (!/^[\x21-\x7e]+$/.test(input)) throw invalid('must be printable ASCII without spaces (percent-encode the rest)');
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw invalid('is not an absolute URL');
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) {
    throw invalid(allowHttp ? 'must be http or https' : 'must be https');
  }
  if (url.hostname === '') throw invalid('needs a host');
  if (url.username !== '' || url.password !== '') {
    throw invalid('must not hold credentials; give them in HttpAuth, which is stored sealed');
  }
  if (input.includes('#')) throw invalid('must not have a fragment');
  return input;
}

export function validateWebhookMessageStream(input: unknown): WebhookMessageStream {
  if (!(WEBHOOK_MESSAGE_STREAMS as readonly unknown[]).includes(input)) {
    throw new DomainError(
      'InvalidMessageStream',
      `The message stream ${JSON.stringify(input)} does not exist; the only message stream is 'outbound'.`,
    );
  }
  return input as WebhookMessageStream;
}

// RFC 9110 token characters.
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Visible ASCII and Latin-1, space and tab: no CR, LF, NUL or other control character.
// eslint-disable-next-line no-control-regex
const HEADER_VALUE_FORBIDDEN = /[\u0000-\u0008\u000a-\u001f\u007f]|[^\u0000-\u00ff]/;

/**
 * Headers sent with every call: each a token name (no reserved one, none twice, case-insensitively) and a value
 * without control characters, at most 20. An Authorization header beside HttpAuth would be sent twice: refused.
 * Throws 'InvalidWebhookHeaders'.
 */
export function validateWebhookHeaders(input: unknown, hasHttpAuth: boolean): WebhookHeader[] {
  const invalid = (why: string) => new DomainError('InvalidWebhookHeaders', `HttpHeaders ${why}.`);
  if (!Array.isArray(input)) throw invalid('must be a list of { Name, Value }');
  if (input.length > WEBHOOK_MAX_HEADERS) throw invalid(`may hold at most ${WEBHOOK_MAX_HEADERS} headers`);
  const seen = new Set<string>();
  return input.map((header: unknown) => {
    const { name, value } = (header ?? {}) as { name?: unknown; value?: unknown };
    if (typeof name !== 'string' || !HEADER_NAME.test(name) || name.length > WEBHOOK_HEADER_NAME_MAX_LENGTH) {
      throw invalid(`has an invalid header name ${JSON.stringify(name)}`);
    }
    const lower = name.toLowerCase();
    if ((RESERVED_WEBHOOK_HEADERS as readonly string[]).includes(lower)) {
      throw invalid(`may not set ${name}: the service sets it on every call`);
    }
    if (lower === 'authorization' && hasHttpAuth) throw invalid('may not set Authorization beside HttpAuth');
    if (seen.has(lower)) throw invalid(`names ${name} twice`);
    seen.add(lower);
    if (typeof value !== 'string' || HEADER_VALUE_FORBIDDEN.test(value)) {
      throw invalid(`has an invalid value for ${name} (no line breaks or control characters)`);
    }
    if (value.length > WEBHOOK_HEADER_VALUE_MAX_LENGTH) {
      throw invalid(`has a value longer than ${WEBHOOK_HEADER_VALUE_MAX_LENGTH} characters for ${name}`);
    }
    return { name, value };
  });
}

/**
 * HTTP Basic credentials: a username of 1..256 characters without ':' or control characters (RFC 7617), and the
 * sealed password (what the password is, the caller checked before sealing it). Throws 'InvalidWebhookHttpAuth'.
 */
export function validateWebhookHttpAuth(input: unknown): WebhookHttpAuth {
  const { username, passwordSealed } = (input ?? {}) as { username?: unknown; passwordSealed?: unknown };
  if (
    typeof username !== 'string' ||
    username.length === 0 ||
    username.length > WEBHOOK_USERNAME_MAX_LENGTH ||
    username.includes(':') ||
    HEADER_VALUE_FORBIDDEN.test(username)
  ) {
    throw new DomainError(
      'InvalidWebhookHttpAuth',
      `HttpAuth.Username must be 1..${WEBHOOK_USERNAME_MAX_LENGTH} characters without ':' or control characters.`,
    );
  }
  if (typeof passwordSealed !== 'string' || passwordSealed.length === 0) {
    throw new DomainError('InvalidWebhookHttpAuth', 'HttpAuth.Password is missing.');
  }
  return { username, passwordSealed };
}

/**
 * The triggers after a change: each given field must be a boolean and replaces the current one; a trigger or
 * field not given keeps its value. Throws 'InvalidWebhookTriggers'.
 */
export function changeWebhookTriggers(current: WebhookTriggers, change: unknown): WebhookTriggers {
  const invalid = (why: string) => new DomainError('InvalidWebhookTriggers', `Triggers ${why}.`);
  if (change === undefined || change === null) return current;
  if (typeof change !== 'object' || Array.isArray(change)) throw invalid('must be an object');
  const next = { ...current } as Record<WebhookTriggerName, Record<string, boolean>>;
  for (const [name, fields] of Object.entries(change)) {
    if (!(WEBHOOK_TRIGGER_NAMES as readonly string[]).includes(name)) throw invalid(`has no trigger ${name}`);
    if (fields === undefined || fields === null) continue;
    if (typeof fields !== 'object' || Array.isArray(fields)) throw invalid(`.${name} must be an object`);
    const trigger = { ...current[name as WebhookTriggerName] } as Record<string, boolean>;
    for (const [field, value] of Object.entries(fields as Record<string, unknown>)) {
      if (!(field in trigger)) throw invalid(`.${name} has no field ${field}`);
      if (value === undefined) continue;
      if (typeof value !== 'boolean') throw invalid(`.${name}.${field} must be true or false`);
      trigger[field] = value;
    }
    next[name as WebhookTriggerName] = trigger;
  }
  return next as unknown as WebhookTriggers;
}

export function webhookNotFound(webhookId: unknown): DomainError {
  return new DomainError('WebhookNotFound', `Webhook ${String(webhookId)} was not found.`, {
    webhookId: String(webhookId),
  });
}
