import type { WebhookConfig } from '@sendline/domain';
import { decryptSecret, type EventStore } from '@sendline/infra';
import type { WebhookCallScheduled } from './callRecord';
import { attemptEventIdOf } from './decide';
import type { CallResult, WebhookHttp } from './http';
import { nextAttemptAt } from './schedule';
import { signWebhook } from './signature';
import type { DeliveryAttempt, DeliveryLog, WebhookDirectory } from './stores';

export const USER_AGENT = 'Sendline-Webhooks/1';

export interface AttemptDependencies {
  store: EventStore;
  directory: WebhookDirectory;
  log: DeliveryLog;
  http: Pick<WebhookHttp, 'call'>;
  secretKey: Buffer;
  retryDelaysMs: readonly number[];
  now?: () => number;
}

/** The headers of one attempt: the webhook's own, HttpAuth as Basic, the Standard Webhooks id, timestamp and signature. */
export function callHeaders(
  webhook: WebhookConfig,
  secretKey: Buffer,
  callId: string,
  timestampSeconds: number,
  body: string,
  unseal: (sealed: string) => string = (sealed) => decryptSecret(sealed, secretKey),
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { name, value } of webhook.httpHeaders) headers[name] = value;
  if (webhook.httpAuth) {
    const password = unseal(webhook.httpAuth.passwordSealed);
    headers['Authorization'] = `Basic ${Buffer.from(`${webhook.httpAuth.username}:${password}`).toString('base64')}`;
  }
  const secret = unseal(webhook.signingSecretSealed);
  headers['Content-Type'] = 'application/json';
  headers['User-Agent'] = USER_AGENT;
  headers['Webhook-Id'] = callId;
  headers['Webhook-Timestamp'] = String(timestampSeconds);
  headers['Webhook-Signature'] = signWebhook(secret, callId, timestampSeconds, body);
  return headers;
}

/**
 * Makes one attempt of a call and settles it: answered 2xx, it is logged and marked answered; failed, the next
 * attempt is appended (on its retry's topic, due after Postmark's delay) before this one counts as done, or, after
 * the last retry, the call is logged as given up. A call already answered (its record read again after a crash or a
 * rebalance) is not made again; a manual redelivery always is, once. A throw (Kafka or Redis out of reach) leaves
 * the attempt undone: the caller tries it again.
 */
export class CallAttempts {
  private readonly now: () => number;
  /** Opened secrets by their sealed form, kept in this process's memory only (never logged, never stored). */
  private readonly opened = new Map<string, string>();

  constructor(private readonly deps: AttemptDependencies) {
    this.now = deps.now ?? Date.now;
  }

  private unseal = (sealed: string): string => {
    let secret = this.opened.get(sealed);
    if (secret === undefined) {
      secret = decryptSecret(sealed, this.deps.secretKey);
      if (this.opened.size >= 10_000) this.opened.clear();
      this.opened.set(sealed, secret);
    }
    return secret;
  };

  async perform(record: WebhookCallScheduled): Promise<DeliveryAttempt | undefined> {
    const { organizationId } = record.metadata;
    const call = record.data;
    // Both reads at once: a call's time in its endpoint's slot is mostly round trips.
    const [answered, webhooks] = await Promise.all([
      call.manual ? false : this.deps.log.answered(call.callId),
      this.deps.directory.webhooks(organizationId),
    ]);
    if (answered) return undefined;
    const webhook = webhooks.find(
      (candidate) => candidate.webhookId === call.webhookId && candidate.organizationId === organizationId,
    );
    const base = {
      callId: call.callId,
      webhookId: call.webhookId,
      recordType: call.recordType,
      attempt: call.attempt,
      manual: call.manual,
    };
    if (!webhook || !webhook.enabled) {
      const dropped: DeliveryAttempt = {
        ...base,
        status: 'Dropped',
        latencyMs: 0,
        answer: '',
        error: webhook ? 'the webhook has no trigger on' : 'the webhook was deleted',
        at: this.now(),
      };
      if (webhook) await this.deps.log.record(organizationId, dropped, false);
      return dropped;
    }
    if (call.attempt === 1 && !call.manual) await this.deps.log.keepCall(record);

    const timestamp = Math.floor(this.now() / 1000);
    const result: CallResult = await this.deps.http.call(
      webhook.url,
      callHeaders(webhook, this.deps.secretKey, call.callId, timestamp, call.body, this.unseal),
      call.body,
    );
    const at = this.now();
    const outcome = {
      ...base,
      latencyMs: result.latencyMs,
      answer: result.answer,
      at,
      ...(result.status !== undefined && { httpStatus: result.status }),
      ...(result.error !== undefined && { error: result.error }),
    };
    if (result.ok) {
      const delivered: DeliveryAttempt = { ...outcome, status: 'Delivered' };
      await this.deps.log.record(organizationId, delivered, true);
      return delivered;
    }
    const next = call.manual ? undefined : nextAttemptAt(call.attempt, at, this.deps.retryDelaysMs);
    if (next === undefined) {
      const failed: DeliveryAttempt = { ...outcome, status: 'Failed' };
      await this.deps.log.record(organizationId, failed, false);
      return failed;
    }
    await this.deps.store.append([nextAttempt(record, next, at)]);
    const retrying: DeliveryAttempt = { ...outcome, status: 'Retrying', nextAttemptAt: next };
    await this.deps.log.record(organizationId, retrying, false);
    return retrying;
  }
}

/** A manual redelivery of a call: its first record again, due now, made once whatever happened before. */
export function manualRedelivery(first: WebhookCallScheduled, now: number): WebhookCallScheduled {
  return {
    type: 'WebhookCallScheduled',
    data: { ...first.data, attempt: 1, retry: 0, dueAt: now, manual: true },
    metadata: {
      ...first.metadata,
      eventId: attemptEventIdOf(first.data.callId, 1, `manual at ${now}`),
      occurredAt: now,
    },
  };
}

/** The record of the attempt after `record`'s, due at `dueAt`. */
export function nextAttempt(record: WebhookCallScheduled, dueAt: number, now: number): WebhookCallScheduled {
  const attempt = record.data.attempt + 1;
  return {
    type: 'WebhookCallScheduled',
    data: { ...record.data, attempt, retry: attempt - 1, dueAt },
    metadata: { ...record.metadata, eventId: attemptEventIdOf(record.data.callId, attempt), occurredAt: now },
  };
}
