import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { WebhookCallScheduled } from '@sendline/domain';
import { getMany } from '../redis/client';
import { releaseLeases, renewLeases } from '../redis/leases';

/**
 * The webhooks' delivery log in Redis: what the webhooks process writes of each attempt of a call, and what the
 * API reads back (a webhook's deliveries) and redelivers from (a call's first record):
 *
 *   <ns>:webhooks:deliveries:<org>:<webhookId> list: the last 100 attempts of the webhook's calls, newest first
 *   <ns>:webhooks:call:<org>:<callId>          string: the call's first record (JSON), for a manual redelivery, 30 days
 *   <ns>:webhooks:answered:<callId>            string: the call's state across every copy of the webhooks app:
 *                                              `1` once an attempt was answered 2xx; `settled:<n>` once attempt n
 *                                              ended otherwise (failed, its next one scheduled or given up; dropped);
 *                                              `calling:<token>` while a copy makes an attempt (a lease); 3 days
 *   <ns>:webhooks:last:<org>:<callId>          string: an inbound call's last attempt (JSON), 30 days: the
 *                                              inbound message's status (Processed, Scheduled, Failed)
 *   <ns>:webhooks:failing:<org>:<webhookId>    string: when the webhook's current streak of failed calls began
 *                                              (ms); deleted by a 2xx answer, 30 days after its last failure
 *
 * None of it is the source of truth: a lost `answered` mark costs a second call with the same Webhook-Id; a lost
 * streak starts counting again (a webhook failing for 24 hours is disabled later, never sooner).
 */
const DAY_S = 24 * 60 * 60;
const CALL_TTL_S = 30 * DAY_S;
const ANSWERED_TTL_S = 3 * DAY_S;

/**
 * KEYS[1]: the call's state (`answered` key). ARGV: the lease's value, the attempt, the lease's life (ms).
 * Answers `answered`, `settled` (this attempt or a later one ended), `held` (another copy makes it now) or `claimed`.
 */
const CLAIM = `
local state = redis.call('GET', KEYS[1])
if state == '1' then return 'answered' end
if state then
  local settled = string.match(state, '^settled:(%d+)$')
  if settled then
    if tonumber(settled) >= tonumber(ARGV[2]) then return 'settled' end
  elseif state ~= ARGV[1] then
    return 'held'
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 'claimed'`;
/** Marks the attempt settled, while the key still holds this copy's lease (an answer's `1` is never overwritten). */
const SETTLE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3]) end return 0`;

/** A call's attempt this copy alone makes now (WebhookDeliveryLog.claim). */
export interface ClaimedCall {
  /** The attempt ended without an answer (failed and rescheduled or given up, dropped): no copy makes it again. */
  settle(): Promise<void>;
  /** The attempt was answered, and its record written: the answer's mark replaced the lease, which is not renewed. */
  answered(): void;
  /** Gives the attempt back (it threw before its call was made): it may be made again. */
  release(): Promise<void>;
  /** Stops renewing the lease (the call was made, its outcome not written): it expires, then the call may be made again. */
  expire(): void;
}
export const WEBHOOK_DELIVERY_LOG_LENGTH = 100;

/** One attempt of a call, as the delivery log keeps it. */
export interface WebhookDeliveryAttempt {
  /** The call's id (its Webhook-Id): what a manual redelivery names. */
  callId: string;
  webhookId: number;
  recordType: string;
  attempt: number;
  manual: boolean;
  /** Delivered: answered 2xx. Retrying: failed, the next attempt is scheduled. Failed: failed, given up. Dropped: the webhook is gone or off. */
  status: 'Delivered' | 'Retrying' | 'Failed' | 'Dropped';
  /** The answer's HTTP status; absent when there was no answer (refused address, timeout, connection). */
  httpStatus?: number;
  latencyMs: number;
  /** The start of the answer's body (at most 1,000 characters). */
  answer: string;
  error?: string;
  at: number;
  nextAttemptAt?: number;
}

interface PendingRecord {
  organizationId: string;
  attempt: WebhookDeliveryAttempt;
  answered: boolean;
  keep: WebhookCallScheduled | undefined;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class WebhookDeliveryLog {
  constructor(
    private readonly redis: Redis,
    private readonly namespace = 'sl',
  ) {}

  private logKey(organizationId: string, webhookId: number): string {
    return `${this.namespace}:webhooks:deliveries:${organizationId}:${webhookId}`;
  }
  private callKey(organizationId: string, callId: string): string {
    return `${this.namespace}:webhooks:call:${organizationId}:${callId}`;
  }
  private answeredKey(callId: string): string {
    return `${this.namespace}:webhooks:answered:${callId}`;
  }
  private lastKey(organizationId: string, callId: string): string {
    return `${this.namespace}:webhooks:last:${organizationId}:${callId}`;
  }
  private failingKey(organizationId: string, webhookId: number): string {
    return `${this.namespace}:webhooks:failing:${organizationId}:${webhookId}`;
  }

  /**
   * Logs an attempt; an answered one (2xx) also marks its call answered and ends its webhook's failure streak; `keep`
   * (a call's first record) is kept for a manual redelivery. Resolves once written. The writes of the attempts
   * settled in the same turn of the event loop leave in one pipeline (a round trip and a write for dozens of calls,
   * where a transaction per call cost more than the call).
   */
  record(
    organizationId: string,
    attempt: WebhookDeliveryAttempt,
    answered: boolean,
    keep?: WebhookCallScheduled,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ organizationId, attempt, answered, keep, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => void this.flush());
    });
  }

  private pending: PendingRecord[] = [];

  private async flush(): Promise<void> {
    const records = this.pending;
    this.pending = [];
    const p = this.redis.pipeline();
    const logs = new Set<string>();
    for (const { organizationId, attempt, answered, keep } of records) {
      const key = this.logKey(organizationId, attempt.webhookId);
      logs.add(key);
      p.lpush(key, JSON.stringify(attempt));
      if (answered) {
        p.set(this.answeredKey(attempt.callId), '1', 'EX', ANSWERED_TTL_S);
        p.del(this.failingKey(organizationId, attempt.webhookId));
      }
      if (attempt.recordType === 'Inbound') {
        p.set(this.lastKey(organizationId, attempt.callId), JSON.stringify(attempt), 'EX', CALL_TTL_S);
      }
      if (keep) p.set(this.callKey(organizationId, keep.data.callId), JSON.stringify(keep), 'EX', CALL_TTL_S);
    }
    for (const key of logs) p.ltrim(key, 0, WEBHOOK_DELIVERY_LOG_LENGTH - 1);
    try {
      const results = await p.exec();
      const failed = results?.find(([error]) => error)?.[0];
      if (failed) throw failed;
      for (const record of records) record.resolve();
    } catch (error) {
      for (const record of records) record.reject(error);
    }
  }

  /** The call ids among `callIds` already answered 2xx, in one round trip (one a master on a cluster). */
  async answeredAmong(callIds: readonly string[]): Promise<Set<string>> {
    if (callIds.length === 0) return new Set();
    const marks = await getMany(
      this.redis,
      callIds.map((id) => this.answeredKey(id)),
    );
    return new Set(callIds.filter((_, i) => marks[i] === '1'));
  }

  /**
   * One copy at a time makes an attempt of a call: the copy whose partitions a rebalance took away may still be making
   * the calls of its last batch while the partitions' new owner reads the same records (docs/scaling.md). Takes the
   * call's lease, waiting while another copy holds it, unless the call was answered or this attempt already ended:
   * then nothing is to be made. The lease is renewed until settled or released; a copy killed mid-call holds it until
   * it expires (`ttlMs`), and the attempt is then made again, with its Webhook-Id (at least once).
   */
  async claim(
    callId: string,
    attempt: number,
    options: { ttlMs?: number; retryDelayMs?: number } = {},
  ): Promise<'answered' | 'settled' | ClaimedCall> {
    const key = this.answeredKey(callId);
    const ttlMs = options.ttlMs ?? 10_000;
    const lease = `calling:${randomUUID()}`;
    for (;;) {
      const state = (await this.redis.eval(CLAIM, 1, key, lease, String(attempt), String(ttlMs))) as string;
      if (state === 'answered' || state === 'settled') return state;
      if (state === 'claimed') break;
      const delay = options.retryDelayMs ?? 100;
      await new Promise((resolve) => setTimeout(resolve, delay / 2 + Math.random() * delay));
    }
    const stopRenewing = renewLeases(this.redis, [key], lease, ttlMs);
    return {
      settle: async () => {
        stopRenewing();
        await this.redis.eval(SETTLE, 1, key, lease, `settled:${attempt}`, String(ANSWERED_TTL_S));
      },
      answered: stopRenewing,
      expire: stopRenewing,
      release: async () => {
        stopRenewing();
        await releaseLeases(this.redis, [key], lease);
      },
    };
  }

  /**
   * A call to the webhook failed at `at`: starts its failure streak if none runs, and returns when the running one
   * began. One round trip, on failures only.
   */
  async failed(organizationId: string, webhookId: number, at: number): Promise<number> {
    const key = this.failingKey(organizationId, webhookId);
    const results = await this.redis.multi().set(key, String(at), 'NX').expire(key, CALL_TTL_S).get(key).exec();
    const [error, since] = results?.[2] ?? [new Error('the failure streak was not read')];
    if (error) throw error;
    return Number(since ?? at);
  }

  /** When the webhook's current streak of failed calls began, or null when its last call was answered. */
  async failingSince(organizationId: string, webhookId: number): Promise<number | null> {
    const since = await this.redis.get(this.failingKey(organizationId, webhookId));
    return since === null ? null : Number(since);
  }

  /** The last attempts of a webhook's calls, newest first. */
  async attempts(
    organizationId: string,
    webhookId: number,
    count = WEBHOOK_DELIVERY_LOG_LENGTH,
  ): Promise<WebhookDeliveryAttempt[]> {
    const raw = await this.redis.lrange(this.logKey(organizationId, webhookId), 0, count - 1);
    return raw.map((json) => JSON.parse(json) as WebhookDeliveryAttempt);
  }

  /** The last attempt of each of the organization's inbound calls among `callIds` that made one, in one round trip (one a master on a cluster). */
  async lastAttempts(organizationId: string, callIds: readonly string[]): Promise<Map<string, WebhookDeliveryAttempt>> {
    const found = new Map<string, WebhookDeliveryAttempt>();
    if (callIds.length === 0) return found;
    const values = await getMany(
      this.redis,
      callIds.map((id) => this.lastKey(organizationId, id)),
    );
    values.forEach((value, i) => {
      if (value) found.set(callIds[i]!, JSON.parse(value) as WebhookDeliveryAttempt);
    });
    return found;
  }

  async answered(callId: string): Promise<boolean> {
    return (await this.redis.get(this.answeredKey(callId))) === '1';
  }

  /** A call of the organization, by id (null when unknown, too old, or another organization's). */
  async call(organizationId: string, callId: string): Promise<WebhookCallScheduled | null> {
    const json = await this.redis.get(this.callKey(organizationId, callId));
    return json ? (JSON.parse(json) as WebhookCallScheduled) : null;
  }
}
