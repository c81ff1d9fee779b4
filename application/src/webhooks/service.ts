import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import {
  DomainError,
  organizationDecider,
  validateWebhookMessageStream,
  validateWebhookUrl,
  WEBHOOK_ID_MAX,
  webhookNotFound,
  type AccountCommand,
  type AccountEvent,
  type OrganizationState,
  type WebhookDisabled,
  type WebhookHeader,
  type WebhookState,
  type WebhookTriggers,
  type WebhookTriggersChange,
} from '@sendline/domain';
import {
  checkDestination,
  CommandHandler,
  encryptSecret,
  type AccountsView,
  type EventAppender,
  type HostResolver,
} from '@sendline/infra';
import { requireOrganization } from '../accounts/service';

/**
 * An organization's webhooks (Postmark's `/webhooks`): create, list, show, change, delete, each change run through
 * the organization decider (CommandHandler: decide on the view's state, append to the accounts topic, apply to the
 * view at once, so the caller reads its own write).
 *
 * Secrets: the signing secret (`whsec_` + 32 random octets in base64, the Standard Webhooks form) is made here,
 * sealed with the service's secret key (as a DKIM private key is) before it enters an event, and returned once, in
 * the answer to `create`. An HTTP Basic password is sealed the same way and shown masked ever after; a client that
 * sends the mask back (a GET then a PUT) keeps the password it had.
 *
 * Destinations: in production a URL whose host is, or resolves to, a non-public address (loopback, private,
 * link-local, metadata…) is refused here, with DNS; the dispatcher checks again before every call. In development
 * (`development: true`, SENDLINE_DEV=1) plain http and local addresses are accepted, to call a receiver on this
 * machine.
 */

/** What a webhook's HTTP Basic password is shown as. */
export const WEBHOOK_PASSWORD_MASK = '********';
export const WEBHOOK_PASSWORD_MAX_LENGTH = 256;
/** Standard Webhooks: `whsec_` then the key, base64. */
export const SIGNING_SECRET_PREFIX = 'whsec_';
export const SIGNING_SECRET_OCTETS = 32;

/** A webhook as a caller states it (the API's Postmark fields, in the domain's names); absent = default/unchanged. */
export interface WebhookInput {
  url?: string;
  messageStream?: string;
  /** null, or an empty username and password: no credentials. */
  httpAuth?: { username: string; password: string } | null;
  httpHeaders?: WebhookHeader[];
  triggers?: WebhookTriggersChange;
}

/** A webhook as it is shown: the password masked, never the signing secret. */
export interface WebhookSummary {
  id: number;
  url: string;
  messageStream: string;
  httpAuth: { username: string; password: string } | null;
  httpHeaders: WebhookHeader[];
  triggers: WebhookTriggers;
  createdAt: number;
  updatedAt: number;
  /** Set while the webhook is disabled for failing every call for 24 hours (a change enables it again). */
  disabled: { at: number; failingSince: number; reason: string } | null;
}

export interface CreatedWebhook extends WebhookSummary {
  /** The secret every call is signed with; shown here once, never again. */
  signingSecret: string;
}

export interface WebhooksServiceOptions {
  store: EventAppender;
  view: AccountsView;
  /** The key that seals the signing secret and HTTP Basic passwords: asked for when one is sealed. */
  secretKey: () => Buffer;
  /** SENDLINE_DEV=1: plain http and local addresses accepted. */
  development: boolean;
  /** How a URL's host is resolved for the address check (production only). */
  resolveHost: HostResolver;
  now?: () => number;
  newId?: () => string;
  /** A fresh webhook id (a positive integer, as Postmark's). */
  newWebhookId?: () => number;
  /** Who runs the use cases, recorded in every event they append (the console's audit): 'api key sl_live_ab12'… */
  actor?: string;
}

export function webhookSummary(webhook: WebhookState): WebhookSummary {
  return {
    id: webhook.webhookId,
    url: webhook.url,
    messageStream: webhook.messageStream,
    httpAuth: webhook.httpAuth ? { username: webhook.httpAuth.username, password: WEBHOOK_PASSWORD_MASK } : null,
    httpHeaders: webhook.httpHeaders.map(({ name, value }) => ({ name, value })),
    triggers: webhook.triggers,
    createdAt: webhook.createdAt,
    updatedAt: webhook.updatedAt,
    disabled: webhook.disabled
      ? { at: webhook.disabled.at, failingSince: webhook.disabled.failingSince, reason: webhook.disabled.reason }
      : null,
  };
}

/** A new signing secret: `whsec_` and 32 random octets in base64. */
export function newSigningSecret(): string {
  return SIGNING_SECRET_PREFIX + randomBytes(SIGNING_SECRET_OCTETS).toString('base64');
}

/** The actor of what the service decides by itself (a webhook disabled for failing). */
const SYSTEM_ACTOR = 'system';

/** Draws a new id until one is free in the organization (a clash among ten in two billion is rare). */
const ID_ATTEMPTS = 5;

export class WebhooksService {
  private readonly now: () => number;
  private readonly newId: () => string;
  private readonly newWebhookId: () => number;
  private readonly commands: CommandHandler<OrganizationState, AccountCommand, AccountEvent>;

  constructor(private readonly options: WebhooksServiceOptions) {
    this.now = options.now ?? Date.now;
    this.newId = options.newId ?? randomUUID;
    this.newWebhookId = options.newWebhookId ?? (() => randomInt(1, WEBHOOK_ID_MAX + 1));
    this.commands = new CommandHandler({
      decider: organizationDecider,
      store: options.store,
      apply: (events) => options.view.apply(events),
    });
  }

  /** The same use cases, run by `actor` (recorded in every event they append). */
  as(actor: string): WebhooksService {
    return new WebhooksService({
      ...this.options,
      now: this.now,
      newId: this.newId,
      newWebhookId: this.newWebhookId,
      actor,
    });
  }

  /** Every webhook of the organization, oldest first; `messageStream` filters (an unknown stream is refused). */
  async list(organizationId: string, messageStream?: string): Promise<WebhookSummary[]> {
    if (messageStream !== undefined) validateWebhookMessageStream(messageStream);
    const webhooks = await this.options.view.webhooks(organizationId);
    return webhooks
      .filter((webhook) => messageStream === undefined || webhook.messageStream === messageStream)
      .map(webhookSummary);
  }

  /** One webhook; refused with 'WebhookNotFound' when the organization has none of this id. */
  async get(organizationId: string, webhookId: number): Promise<WebhookSummary> {
    const webhook = Number.isSafeInteger(webhookId) ? await this.options.view.webhook(organizationId, webhookId) : null;
    if (!webhook) throw webhookNotFound(webhookId);
    return webhookSummary(webhook);
  }

  async create(organizationId: string, input: WebhookInput): Promise<CreatedWebhook> {
    const allowHttp = this.options.development;
    // The URL's form first (the decider would refuse it too), so that DNS is asked only about a well-formed URL.
    const url = validateWebhookUrl(input.url, allowHttp);
    await this.requirePublicDestination(url);
    const state = await requireOrganization(this.options.view, organizationId);
    const key = this.options.secretKey();
    const signingSecret = newSigningSecret();
    const signingSecretSealed = encryptSecret(signingSecret, key);
    const httpAuth = this.sealHttpAuth(input.httpAuth, key);
    for (let attempt = 1; ; attempt++) {
      const webhookId = this.newWebhookId();
      try {
        const [created] = await this.execute(
          organizationId,
          {
            type: 'CreateWebhook',
            data: {
              webhookId,
              url,
              messageStream: input.messageStream,
              httpAuth: httpAuth ?? null,
              httpHeaders: input.httpHeaders,
              triggers: input.triggers,
              signingSecretSealed,
              allowHttp,
            },
          },
          state,
        );
        if (created?.type !== 'WebhookCreated') throw new Error('CreateWebhook decided no WebhookCreated');
        const at = created.metadata.occurredAt;
        return { ...webhookSummary({ ...created.data, createdAt: at, updatedAt: at }), signingSecret };
      } catch (error) {
        if (error instanceof DomainError && error.code === 'WebhookAlreadyExists' && attempt < ID_ATTEMPTS) continue;
        throw error;
      }
    }
  }

  /** Changes the fields given; the others keep their values. */
  async update(organizationId: string, webhookId: number, input: WebhookInput): Promise<WebhookSummary> {
    const allowHttp = this.options.development;
    const state = await requireOrganization(this.options.view, organizationId);
    const current = Number.isSafeInteger(webhookId) ? state.webhooks.get(webhookId) : undefined;
    if (!current) throw webhookNotFound(webhookId);
    if (input.url !== undefined && input.url !== current.url) {
      await this.requirePublicDestination(validateWebhookUrl(input.url, allowHttp));
    }
    let httpAuth: { username: string; passwordSealed: string | null } | null | undefined;
    if (input.httpAuth !== undefined) {
      const keepPassword = input.httpAuth !== null && input.httpAuth.password === WEBHOOK_PASSWORD_MASK;
      httpAuth = keepPassword
        ? { username: input.httpAuth!.username, passwordSealed: null }
        : this.sealHttpAuth(input.httpAuth, this.options.secretKey());
    }
    const events = await this.execute(
      organizationId,
      {
        type: 'UpdateWebhook',
        data: {
          webhookId,
          url: input.url,
          httpAuth,
          httpHeaders: input.httpHeaders,
          triggers: input.triggers,
          allowHttp,
        },
      },
      state,
    );
    const updated = events.find((event) => event.type === 'WebhookUpdated');
    if (!updated) return webhookSummary(current);
    return webhookSummary({ ...updated.data, updatedAt: updated.metadata.occurredAt });
  }

  /**
   * Disables a webhook whose calls all failed since `failingSince` when that streak lasted `disableAfterMs` (the
   * domain decides: counted from the webhook's last save, not twice). The WebhookDisabled decided, or null when
   * nothing was (not long enough, disabled already, deleted meanwhile). The webhooks process asks it after a failure.
   */
  async disableFailing(
    organizationId: string,
    webhookId: number,
    failure: { failingSince: number; reason: string; disableAfterMs: number },
  ): Promise<WebhookDisabled | null> {
    const state = await requireOrganization(this.options.view, organizationId);
    if (!state.webhooks.has(webhookId)) return null;
    // Nobody asked for it: the webhooks process decided it from the calls' answers.
    const events = await this.as(SYSTEM_ACTOR).execute(
      organizationId,
      { type: 'DisableWebhook', data: { webhookId, ...failure } },
      state,
    );
    return events.find((event): event is WebhookDisabled => event.type === 'WebhookDisabled') ?? null;
  }

  async delete(organizationId: string, webhookId: number): Promise<void> {
    const state = await requireOrganization(this.options.view, organizationId);
    if (!Number.isSafeInteger(webhookId) || !state.webhooks.has(webhookId)) throw webhookNotFound(webhookId);
    await this.execute(organizationId, { type: 'DeleteWebhook', data: { webhookId } }, state);
  }

  private execute(
    organizationId: string,
    command: Omit<AccountCommand, 'metadata'>,
    state: OrganizationState,
  ): Promise<AccountEvent[]> {
    return this.commands.handle(
      {
        ...command,
        metadata: {
          organizationId,
          now: this.now(),
          eventIds: [this.newId()],
          ...(this.options.actor !== undefined ? { actor: this.options.actor } : {}),
        },
      } as AccountCommand,
      state,
    );
  }

  /** In production: refused with 'WebhookUrlNotAllowed' when the host is, or resolves to, a non-public address. */
  private async requirePublicDestination(url: string): Promise<void> {
    if (this.options.development) return;
    const verdict = await checkDestination(url, this.options.resolveHost);
    // A name without an address now cannot be judged: accepted, and judged again before every call.
    if (verdict.kind !== 'refused') return;
    const where = verdict.address === verdict.host ? verdict.host : `${verdict.host} (${verdict.address})`;
    throw new DomainError(
      'WebhookUrlNotAllowed',
      `The webhook Url points to ${where}, a ${verdict.addressClass} address; webhooks are only sent to public addresses.`,
      { host: verdict.host, addressClass: verdict.addressClass },
    );
  }

  /** The credentials with their password sealed; null for none (null, or an empty username and password). */
  private sealHttpAuth(
    auth: WebhookInput['httpAuth'],
    key: Buffer,
  ): { username: string; passwordSealed: string } | null | undefined {
    if (auth === undefined) return undefined;
    if (auth === null || (auth.username === '' && auth.password === '')) return null;
    const { username, password } = auth;
    if (
      typeof password !== 'string' ||
      password.length === 0 ||
      password.length > WEBHOOK_PASSWORD_MAX_LENGTH ||
      // eslint-disable-next-line no-control-regex
      /[\u0000-\u001f\u007f]/.test(password)
    ) {
      throw new DomainError(
        'InvalidWebhookHttpAuth',
        `HttpAuth.Password must be 1..${WEBHOOK_PASSWORD_MAX_LENGTH} characters without control characters.`,
      );
    }
    return { username, passwordSealed: encryptSecret(password, key) };
  }
}
