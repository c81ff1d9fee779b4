import { eventMetadata } from '../decider';
import { DomainError } from '../domainError';
import type { Command } from '../event';
import { requireOrganization, type AccountEvent, type OrganizationState } from './organization';
import {
  changeWebhookTriggers,
  isWebhookId,
  MAX_WEBHOOKS_PER_STREAM,
  noWebhookTriggers,
  validateWebhookHeaders,
  validateWebhookHttpAuth,
  validateWebhookMessageStream,
  validateWebhookUrl,
  failureStreakStart,
  webhookFailedLongEnough,
  webhookNotFound,
  type WebhookData,
  type WebhookHeader,
  type WebhookHttpAuth,
  type WebhookTriggersChange,
} from './webhooks';

/**
 * The organization's webhook commands and their decisions (part of the organization decider: commands.ts hands
 * them here). The webhook's rules (URL, headers, triggers) are webhooks.ts's.
 */

/**
 * A new webhook. Its id (a positive integer, Postmark's kind) and its signing secret are drawn by the caller, the
 * secret and the HTTP Basic password sealed before they reach the domain. Absent triggers are off.
 */
export type CreateWebhook = Command<
  'CreateWebhook',
  {
    webhookId: number;
    url: string;
    /** Default: outbound. */
    messageStream?: string;
    httpAuth?: WebhookHttpAuth | null;
    httpHeaders?: readonly WebhookHeader[];
    triggers?: WebhookTriggersChange;
    signingSecretSealed: string;
    /** Plain http is accepted: the service runs in development (the caller knows its mode; the domain does not). */
    allowHttp: boolean;
  }
>;
/**
 * A change to a webhook: a field not given keeps its value. `httpAuth: null` drops the credentials; a
 * `passwordSealed` of null keeps the current password (a client sending back the masked password it was shown).
 */
export type UpdateWebhook = Command<
  'UpdateWebhook',
  {
    webhookId: number;
    url?: string;
    httpAuth?: { username: string; passwordSealed: string | null } | null;
    httpHeaders?: readonly WebhookHeader[];
    triggers?: WebhookTriggersChange;
    allowHttp: boolean;
  }
>;
export type DeleteWebhook = Command<'DeleteWebhook', { webhookId: number }>;
/**
 * The webhooks process saw every call to the webhook fail since `failingSince` (the first failure after the last
 * success, kept durably by the caller) and asks to disable it. `disableAfterMs` is the streak that disables
 * (24 hours; configuration, shorter in tests); `reason` the last failure.
 */
export type DisableWebhook = Command<
  'DisableWebhook',
  { webhookId: number; failingSince: number; reason: string; disableAfterMs: number }
>;

export type WebhookCommand = CreateWebhook | UpdateWebhook | DeleteWebhook | DisableWebhook;

function createWebhook(command: CreateWebhook, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const { webhookId, signingSecretSealed, allowHttp } = command.data;
  if (!isWebhookId(webhookId)) {
    throw new DomainError('InvalidWebhookId', `invalid webhook id ${JSON.stringify(webhookId)}`);
  }
  if (state.webhooks.has(webhookId)) {
    throw new DomainError('WebhookAlreadyExists', `a webhook with id ${webhookId} exists`, { webhookId });
  }
  const url = validateWebhookUrl(command.data.url, allowHttp === true);
  const messageStream = validateWebhookMessageStream(command.data.messageStream ?? 'outbound');
  const inStream = [...state.webhooks.values()].filter((webhook) => webhook.messageStream === messageStream).length;
  if (inStream >= MAX_WEBHOOKS_PER_STREAM) {
    throw new DomainError(
      'TooManyWebhooks',
      `The message stream ${messageStream} already has ${MAX_WEBHOOKS_PER_STREAM} webhooks, the most it may have.`,
      { max: MAX_WEBHOOKS_PER_STREAM },
    );
  }
  const httpAuth = command.data.httpAuth == null ? null : validateWebhookHttpAuth(command.data.httpAuth);
  const httpHeaders = validateWebhookHeaders(command.data.httpHeaders ?? [], httpAuth !== null);
  const triggers = changeWebhookTriggers(noWebhookTriggers(), command.data.triggers);
  if (typeof signingSecretSealed !== 'string' || signingSecretSealed.length === 0) {
    throw new DomainError('InvalidWebhookSecret', 'the sealed signing secret is missing');
  }
  const data: WebhookData = { webhookId, url, messageStream, httpAuth, httpHeaders, triggers, signingSecretSealed };
  return [{ type: 'WebhookCreated', data, metadata: eventMetadata(command.metadata)() }];
}

/**
 * A change that leaves the webhook as it was decides nothing, unless the webhook is disabled: saving it (even
 * unchanged) is how the customer says the endpoint is fixed, and enables it again.
 */
function updateWebhook(command: UpdateWebhook, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const { webhookId } = command.data;
  const current = state.webhooks.get(webhookId);
  if (!current) throw webhookNotFound(webhookId);
  const url =
    command.data.url === undefined ? current.url : validateWebhookUrl(command.data.url, command.data.allowHttp);
  let httpAuth = current.httpAuth;
  const auth = command.data.httpAuth;
  if (auth === null) httpAuth = null;
  else if (auth !== undefined) {
    const passwordSealed = auth.passwordSealed ?? current.httpAuth?.passwordSealed;
    if (passwordSealed === undefined) {
      throw new DomainError('InvalidWebhookHttpAuth', 'HttpAuth.Password is required: the webhook has none to keep.');
    }
    httpAuth = validateWebhookHttpAuth({ username: auth.username, passwordSealed });
  }
  const httpHeaders = validateWebhookHeaders(command.data.httpHeaders ?? current.httpHeaders, httpAuth !== null);
  const triggers = changeWebhookTriggers(current.triggers, command.data.triggers);
  const next: WebhookData = {
    webhookId,
    url,
    messageStream: current.messageStream,
    httpAuth,
    httpHeaders,
    triggers,
    signingSecretSealed: current.signingSecretSealed,
  };
  const before: WebhookData = {
    webhookId,
    url: current.url,
    messageStream: current.messageStream,
    httpAuth: current.httpAuth,
    httpHeaders: current.httpHeaders,
    triggers: current.triggers,
    signingSecretSealed: current.signingSecretSealed,
  };
  if (sameWebhook(before, next) && !current.disabled) return [];
  return [
    {
      type: 'WebhookUpdated',
      data: { ...next, createdAt: current.createdAt },
      metadata: eventMetadata(command.metadata)(),
    },
  ];
}

function sameWebhook(a: WebhookData, b: WebhookData): boolean {
  const triggers = (t: WebhookData['triggers']) =>
    [
      t.delivery.enabled,
      t.bounce.enabled,
      t.bounce.includeContent,
      t.subscriptionChange.enabled,
      t.open.enabled,
      t.open.postFirstOpenOnly,
      t.click.enabled,
      t.spamComplaint.enabled,
      t.spamComplaint.includeContent,
    ].join();
  return (
    a.url === b.url &&
    a.httpAuth?.username === b.httpAuth?.username &&
    a.httpAuth?.passwordSealed === b.httpAuth?.passwordSealed &&
    JSON.stringify(a.httpHeaders.map((h) => [h.name, h.value])) ===
      JSON.stringify(b.httpHeaders.map((h) => [h.name, h.value])) &&
    triggers(a.triggers) === triggers(b.triggers)
  );
}

function deleteWebhook(command: DeleteWebhook, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const { webhookId } = command.data;
  if (!state.webhooks.has(webhookId)) throw webhookNotFound(webhookId);
  return [{ type: 'WebhookDeleted', data: { webhookId }, metadata: eventMetadata(command.metadata)() }];
}

/**
 * Disables a webhook whose calls all failed for `disableAfterMs` (the streak counted from the webhook's last save,
 * failureStreakStart), and names the organization's admins to tell. A webhook already disabled, saved since, or
 * not failing long enough decides nothing: the caller may ask again after every failure, and after a crash.
 */
function disableWebhook(command: DisableWebhook, state: OrganizationState): AccountEvent[] {
  requireOrganization(command, state);
  const { webhookId, failingSince, reason, disableAfterMs } = command.data;
  const current = state.webhooks.get(webhookId);
  if (!current) throw webhookNotFound(webhookId);
  if (!Number.isSafeInteger(disableAfterMs) || disableAfterMs <= 0 || !Number.isSafeInteger(failingSince)) {
    throw new DomainError('InvalidWebhookDisabling', 'the failing streak and its limit must be whole milliseconds');
  }
  if (!webhookFailedLongEnough(current, failingSince, command.metadata.now, disableAfterMs)) return [];
  const { updatedAt: _updatedAt, disabled: _disabled, ...webhook } = current;
  return [
    {
      type: 'WebhookDisabled',
      data: {
        ...webhook,
        failingSince: failureStreakStart(current, failingSince),
        reason: reason.slice(0, WEBHOOK_DISABLED_REASON_MAX_LENGTH),
        notifyAdmins: adminsOf(state),
      },
      metadata: eventMetadata(command.metadata)(),
    },
  ];
}

/** How much of the last failure a WebhookDisabled keeps. */
export const WEBHOOK_DISABLED_REASON_MAX_LENGTH = 500;

/** The organization's admins (who are told when a webhook is disabled), in address order. */
function adminsOf(state: OrganizationState): string[] {
  return [...state.members]
    .filter(([, member]) => member.role === 'admin')
    .map(([email]) => email)
    .sort();
}

export function decideWebhook(command: WebhookCommand, state: OrganizationState): AccountEvent[] {
  switch (command.type) {
    case 'CreateWebhook':
      return createWebhook(command, state);
    case 'UpdateWebhook':
      return updateWebhook(command, state);
    case 'DeleteWebhook':
      return deleteWebhook(command, state);
    case 'DisableWebhook':
      return disableWebhook(command, state);
  }
}
