import {
  INBOUND_HOOK_ID,
  webhookFailedLongEnough,
  type WebhookCallScheduled,
  type WebhookConfig,
} from '@sendline/domain';
import {
  decryptSecret,
  webhookCallCommands,
  type EventStore,
  type WebhookCallCommands,
  type WebhookDeliveryAttempt,
  type WebhookDeliveryLog,
} from '@sendline/infra';
import { nextAttemptOf } from './commands';
import type { CallResult, WebhookHttp } from './http';
import { nextAttemptAt } from './schedule';
import { signWebhook } from './signature';
import type { WebhookDirectory } from './stores';

export const USER_AGENT = 'Sendline-Webhooks/1';

/** The waits before a made call's outcome is written again (a Redis or Kafka reply lost or late): some 8 s in all. */
export const RECORD_RETRY_DELAYS_MS = [250, 500, 1000, 2000, 4000];

/**
 * A call was made, and its outcome could not be written (Redis or Kafka away for RECORD_RETRY_DELAYS_MS): the call's
 * lease expires, and the call is made again, with its Webhook-Id.
 */
export class OutcomeNotWritten extends Error {
  constructor(
    readonly callId: string,
    cause: unknown,
  ) {
    super(`webhook call ${callId} was made, and its outcome could not be written: ${String(cause)}`, { cause });
    this.name = 'OutcomeNotWritten';
  }
}

/** How a made call's outcome is written again (CallAttempts.untilWritten). */
interface WriteAgain {
  /** Whether a write whose reply was lost took effect (then it is not made again). */
  landed?: () => Promise<boolean>;
  /** The waits before each new try (default RECORD_RETRY_DELAYS_MS; none: not tried again). */
  delaysMs?: readonly number[];
}

/**
 * Disables a webhook whose calls all failed since `failingSince`, if the domain agrees (the application's
 * WebhooksService.disableFailing); resolves to whether it decided the disabling now.
 */
export type DisableFailingWebhook = (
  organizationId: string,
  webhookId: number,
  failure: { failingSince: number; reason: string; disableAfterMs: number },
) => Promise<boolean>;

export interface AttemptDependencies {
  store: EventStore;
  directory: WebhookDirectory;
  log: WebhookDeliveryLog;
  http: Pick<WebhookHttp, 'call'>;
  secretKey: Buffer;
  retryDelaysMs: readonly number[];
  /** How long a webhook may fail every call before it is disabled (24 h). */
  disableAfterMs: number;
  /** Absent: webhooks are never disabled (tools and tests of the calls alone). */
  disable?: DisableFailingWebhook;
  /** How long a copy killed mid-call holds the call's lease (renewed every third of it while the call runs): 10 s. */
  leaseTtlMs?: number;
  /** A made call's outcome failed to be written, and is written again (logged by the app). */
  onRecordRetry?: (callId: string, error: unknown) => void;
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
 * rebalance) is not made again; a manual redelivery always is, once. A throw before the call (Kafka or Redis out of
 * reach) leaves the attempt undone: the caller tries it again. After the call, its outcome's writes are tried again
 * (untilWritten), not the call.
 */
export class CallAttempts {
  private readonly now: () => number;
  /** Opened secrets by their sealed form, kept in this process's memory only (never logged, never stored). */
  private readonly opened = new Map<string, string>();
  /** Disablings under way, by webhook: the calls failing at once in its slots ask the domain once. */
  private readonly disabling = new Map<string, Promise<boolean>>();
  /** The next attempts' records, decided by the domain and appended through the CommandHandler. */
  private readonly calls: WebhookCallCommands;

  constructor(private readonly deps: AttemptDependencies) {
    this.now = deps.now ?? Date.now;
    this.calls = webhookCallCommands(deps.store);
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

  /**
   * The calls among `records` already answered 2xx (read again after a crash or a rebalance), in one round trip
   * for a whole fetched batch, before their turns: perform is told, and a call's turn is not spent on the read.
   */
  answeredAmong(records: readonly WebhookCallScheduled[]): Promise<Set<string>> {
    return this.deps.log.answeredAmong(records.filter((record) => !record.data.manual).map((r) => r.data.callId));
  }

  /**
   * `answeredBefore`: what answeredAmong said of it (undefined: not read). `called` is told once the HTTP call is
   * over (the caller frees the endpoint's slot then, while the attempt is recorded). Undefined when there was
   * nothing to make: the call was answered, or another copy made this attempt already.
   *
   * One copy at a time: an attempt first claims its call (WebhookDeliveryLog.claim), so a copy that lost its
   * partitions to a rebalance mid-batch and the partitions' new owner never both make it; the second reads the first's
   * outcome once its lease is given back, and makes nothing. A manual redelivery is always made, once.
   */
  async perform(
    record: WebhookCallScheduled,
    answeredBefore?: boolean,
    called?: () => void,
  ): Promise<WebhookDeliveryAttempt | undefined> {
    const call = record.data;
    if (!call.manual && answeredBefore) return undefined;
    const claim = call.manual
      ? undefined
      : await this.deps.log.claim(call.callId, call.attempt, { ttlMs: this.deps.leaseTtlMs ?? 10_000 });
    if (claim === 'answered' || claim === 'settled') return undefined;
    let attempt: WebhookDeliveryAttempt;
    try {
      attempt = await this.attempt(record, called);
    } catch (error) {
      if (error instanceof OutcomeNotWritten) {
        // Made, its outcome unwritten: the lease is left to expire, then the call is made again (at least once).
        claim?.expire();
      } else {
        // Not made (Kafka or Redis away before the call): given back, to be made by whichever copy reads it next.
        await claim?.release().catch(() => undefined);
      }
      throw error;
    }
    if (attempt.status === 'Delivered') {
      // Recorded: its mark replaced the lease (no round trip to give it back).
      claim?.answered();
    } else {
      // Not settled (Redis away): the lease expires on its own.
      await claim?.settle().catch(() => undefined);
    }
    return attempt;
  }

  /** Makes the attempt and records it (see perform). */
  private async attempt(record: WebhookCallScheduled, called?: () => void): Promise<WebhookDeliveryAttempt> {
    const { organizationId } = record.metadata;
    const call = record.data;
    const inbound = call.recordType === 'Inbound';
    const webhooks = await (inbound
      ? this.inboundHookOf(organizationId)
      : this.deps.directory.webhooks(organizationId));
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
    if (webhook?.disabled) {
      // Its pending calls (retries, redeliveries) are given up without a call.
      const givenUp: WebhookDeliveryAttempt = {
        ...base,
        status: 'Failed',
        latencyMs: 0,
        answer: '',
        error: `given up: the webhook was disabled (${webhook.disabled.reason})`,
        at: this.now(),
      };
      await this.deps.log.record(organizationId, givenUp, false);
      return givenUp;
    }
    if (!webhook || !webhook.enabled) {
      const dropped: WebhookDeliveryAttempt = {
        ...base,
        status: 'Dropped',
        latencyMs: 0,
        answer: '',
        error: inbound
          ? 'the organization has no InboundHookUrl'
          : webhook
            ? 'the webhook has no trigger on'
            : 'the webhook was deleted',
        at: this.now(),
      };
      if (webhook || inbound) await this.deps.log.record(organizationId, dropped, false);
      return dropped;
    }
    // The first attempt's record is kept (with its log entry, below) for a manual redelivery.
    const keep = call.attempt === 1 && !call.manual ? record : undefined;

    const timestamp = Math.floor(this.now() / 1000);
    const result: CallResult = await this.deps.http.call(
      webhook.url,
      callHeaders(webhook, this.deps.secretKey, call.callId, timestamp, call.body, this.unseal),
      call.body,
    );
    called?.();
    // From here the call is made: what follows writes its outcome, each write tried again until it is written, never
    // the call made again (a blind retry is a second call).
    const written = <T>(write: () => Promise<T>, options?: WriteAgain) =>
      this.untilWritten(call.callId, write, options);
    const at = this.now();
    const outcome = {
      ...base,
      latencyMs: result.latencyMs,
      answer: result.answer,
      at,
      ...(result.status !== undefined && { httpStatus: result.status }),
      ...(result.error !== undefined && { error: result.error }),
    };
    // Postmark's inbound hook: only a 200 counts as posted, and a 403 stops the retries.
    const ok = inbound ? result.status === 200 : result.ok;
    if (ok) {
      const delivered: WebhookDeliveryAttempt = { ...outcome, status: 'Delivered' };
      // An answered record whose reply was lost has marked its call answered: not logged twice.
      await written(() => this.deps.log.record(organizationId, delivered, true, keep), {
        landed: async () => (await this.deps.log.answeredAmong([call.callId])).has(call.callId),
      });
      return delivered;
    }
    // The inbound hook is never disabled: each message's call runs its own schedule.
    // Not tried again: a disabling whose reply was lost may have told the admins already (its notice is mail).
    const disabled = inbound
      ? false
      : await written(() => this.disableIfFailingLong(webhook, at, outcome.error ?? 'failed'), { delaysMs: [] });
    const refused = inbound && result.status === 403;
    const next =
      call.manual || disabled || refused ? undefined : nextAttemptAt(call.attempt, at, this.deps.retryDelaysMs);
    if (next === undefined) {
      const failed: WebhookDeliveryAttempt = {
        ...outcome,
        status: 'Failed',
        ...(disabled && { error: `${outcome.error}; given up: the webhook is disabled, every call failed since then` }),
      };
      await written(() => this.deps.log.record(organizationId, failed, false, keep));
      return failed;
    }
    // Appended twice (a lost reply), the next attempt is made once: its claim finds it ended.
    await written(() => this.calls.handle(nextAttemptOf(record, next, at)));
    const retrying: WebhookDeliveryAttempt = { ...outcome, status: 'Retrying', nextAttemptAt: next };
    await written(() => this.deps.log.record(organizationId, retrying, false, keep));
    return retrying;
  }

  /**
   * A write of a made call's outcome, tried again after each failure (by default RECORD_RETRY_DELAYS_MS, some 8 s in
   * all, within the call's lease, renewed meanwhile), unless `landed` finds that a write whose reply was lost took
   * effect. Throws OutcomeNotWritten once the tries are spent: the lease then expires and the call is made again.
   */
  private async untilWritten<T>(callId: string, write: () => Promise<T>, options: WriteAgain = {}): Promise<T> {
    const delays = options.delaysMs ?? RECORD_RETRY_DELAYS_MS;
    for (let failures = 0; ; failures++) {
      try {
        return await write();
      } catch (error) {
        const delay = delays[failures];
        if (delay === undefined) throw new OutcomeNotWritten(callId, error);
        this.deps.onRecordRetry?.(callId, error);
        await new Promise((resolve) => setTimeout(resolve, delay));
        if (options.landed && (await options.landed().catch(() => false))) return undefined as T;
      }
    }
  }

  /** The organization's inbound hook as a list of one (none before its settings were set). */
  private async inboundHookOf(organizationId: string): Promise<WebhookConfig[]> {
    const hook = await this.deps.directory.inboundHook?.(organizationId);
    return hook && hook.webhookId === INBOUND_HOOK_ID ? [hook] : [];
  }

  /**
   * A failed call extends its webhook's failure streak (kept in Redis, so a restart does not reset it); once the
   * streak lasted `disableAfterMs` the webhook is disabled (the domain decides, and names the admins to tell).
   * Resolves to whether this call's webhook is disabled now.
   */
  private async disableIfFailingLong(webhook: WebhookConfig, at: number, reason: string): Promise<boolean> {
    const { organizationId, webhookId } = webhook;
    const failingSince = await this.deps.log.failed(organizationId, webhookId, at);
    const disable = this.deps.disable;
    if (!disable || !webhookFailedLongEnough(webhook, failingSince, at, this.deps.disableAfterMs)) return false;
    const key = `${organizationId}/${webhookId}`;
    let decided = this.disabling.get(key);
    if (!decided) {
      decided = disable(organizationId, webhookId, {
        failingSince,
        reason,
        disableAfterMs: this.deps.disableAfterMs,
      }).finally(() => {
        this.disabling.delete(key);
        this.deps.directory.forget?.(organizationId);
      });
      this.disabling.set(key, decided);
    }
    return decided;
  }
}
