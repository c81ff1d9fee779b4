import type { WebhookConfig } from '@sendline/domain';
import { getMany, type Redis } from '@sendline/infra';
import type { MessageSummary } from './payloads';

/**
 * What the webhooks keep in Redis besides the delivery log (infra's WebhookDeliveryLog, which the API reads too) and
 * the accounts view they read the webhooks from:
 *
 *   <ns>:webhooks:message:<messageId>          string: the message's summary (JSON), 30 days
 *
 * Not the source of truth: a lost summary leaves a payload's Tag, Metadata, Subject and From empty.
 */
const DAY_S = 24 * 60 * 60;
export const SUMMARY_TTL_S = 30 * DAY_S;

/** The webhooks of an organization (the accounts view's `webhooks`). */
export interface WebhookDirectory {
  webhooks(organizationId: string): Promise<WebhookConfig[]>;
  /**
   * The organization's inbound hook as a webhook (id INBOUND_HOOK_ID: its InboundHookUrl and signing secret), or
   * null when its settings were never set. Absent: inbound calls find no hook (dropped).
   */
  inboundHook?(organizationId: string): Promise<WebhookConfig | null>;
  /** Forgets what is kept of the organization's webhooks (one was just disabled): the next read is fresh. */
  forget?(organizationId: string): void;
}

/**
 * The accounts view's webhooks, each organization's list kept `ttlMs` in memory: the dispatcher and the caller ask
 * for every event and call, and a change to a webhook takes effect within that time.
 */
export class CachedWebhookDirectory implements WebhookDirectory {
  private readonly cache = new Map<string, { at: number; webhooks: Promise<WebhookConfig[]> }>();
  constructor(
    private readonly source: WebhookDirectory,
    private readonly ttlMs = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  webhooks(organizationId: string): Promise<WebhookConfig[]> {
    const hit = this.cache.get(organizationId);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.webhooks;
    const webhooks = this.source.webhooks(organizationId);
    this.cache.set(organizationId, { at: this.now(), webhooks });
    // A failed read is not kept.
    webhooks.catch(() => this.cache.delete(organizationId));
    if (this.cache.size > 10_000) this.cache.delete(this.cache.keys().next().value!);
    return webhooks;
  }

  forget(organizationId: string): void {
    this.cache.delete(organizationId);
    this.hooks.delete(organizationId);
  }

  private readonly hooks = new Map<string, { at: number; hook: Promise<WebhookConfig | null> }>();

  inboundHook(organizationId: string): Promise<WebhookConfig | null> {
    if (!this.source.inboundHook) return Promise.resolve(null);
    const hit = this.hooks.get(organizationId);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.hook;
    const hook = this.source.inboundHook(organizationId);
    this.hooks.set(organizationId, { at: this.now(), hook });
    hook.catch(() => this.hooks.delete(organizationId));
    if (this.hooks.size > 10_000) this.hooks.delete(this.hooks.keys().next().value!);
    return hook;
  }
}

export class MessageSummaries {
  constructor(
    private readonly redis: Redis,
    private readonly namespace = 'sl',
  ) {}

  private key(messageId: string): string {
    return `${this.namespace}:webhooks:message:${messageId}`;
  }

  async put(summaries: ReadonlyMap<string, MessageSummary>): Promise<void> {
    if (summaries.size === 0) return;
    const p = this.redis.pipeline();
    for (const [messageId, summary] of summaries)
      p.set(this.key(messageId), JSON.stringify(summary), 'EX', SUMMARY_TTL_S);
    const results = await p.exec();
    const failed = results?.find(([error]) => error);
    if (failed) throw failed[0];
  }

  async get(messageIds: readonly string[]): Promise<Map<string, MessageSummary>> {
    const found = new Map<string, MessageSummary>();
    if (messageIds.length === 0) return found;
    const values = await getMany(
      this.redis,
      messageIds.map((id) => this.key(id)),
    );
    values.forEach((value, i) => {
      if (value) found.set(messageIds[i]!, JSON.parse(value) as MessageSummary);
    });
    return found;
  }
}
