import type { RedeliverWebhookCall, WebhookCallScheduled } from '@sendline/domain';
import {
  attemptEventIdOf,
  WEBHOOK_DELIVERY_LOG_LENGTH,
  webhookCallCommands,
  type EventAppender,
  type WebhookCallCommands,
  type WebhookDeliveryAttempt,
  type WebhookDeliveryLog,
} from '@sendline/infra';

/** A manual redelivery of a call: its first record again, due now, made once whatever happened before. */
export function manualRedelivery(first: WebhookCallScheduled, now: number): RedeliverWebhookCall {
  const eventId = attemptEventIdOf(first.data.callId, 1, `manual at ${now}`);
  return {
    type: 'RedeliverWebhookCall',
    data: { first: first.data },
    metadata: { organizationId: first.metadata.organizationId, now, eventIds: [eventId] },
  };
}

/**
 * A webhook's deliveries (ours, beyond Postmark): the last attempts of its calls, read from the delivery log the
 * webhooks process writes, and a call made again on demand (its first record appended again, due now; the webhooks
 * process's caller makes it). The caller has checked that the webhook is the organization's.
 */
export class WebhookDeliveries {
  /** A redelivery is decided by the domain's webhook call decider and appended through the CommandHandler. */
  private readonly calls: WebhookCallCommands;

  constructor(private readonly deps: { log: WebhookDeliveryLog; store: EventAppender; now: () => number }) {
    this.calls = webhookCallCommands(deps.store);
  }

  /** The last `count` attempts of the webhook's calls (all that are kept by default), newest first. */
  attempts(
    organizationId: string,
    webhookId: number,
    count = WEBHOOK_DELIVERY_LOG_LENGTH,
  ): Promise<WebhookDeliveryAttempt[]> {
    return this.deps.log.attempts(organizationId, webhookId, count);
  }

  /**
   * Schedules the call `callId` of the webhook again; resolves to its first record, or null when the organization
   * has no such call of this webhook (unknown, too old, another webhook's or another organization's).
   */
  async redeliver(organizationId: string, webhookId: number, callId: string): Promise<WebhookCallScheduled | null> {
    const first = await this.deps.log.call(organizationId, callId);
    if (!first || first.data.webhookId !== webhookId) return null;
    await this.calls.handle(manualRedelivery(first, this.deps.now()));
    return first;
  }
}
