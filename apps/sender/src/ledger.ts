import { InfrastructureError, retry, type Redis } from '@sendline/infra';

/**
 * The sender's delivery ledger in Redis: what it already did for each message, so that a handler run
 * again (at-least-once consumption: a crash before the commit, a rebalance, a retry record fetched
 * twice) never sends twice what a server already accepted, and never decides twice what it recorded.
 *
 *   <ns>:sender:<group>:message:<messageId>   hash, expires `ttlMs` after its last write
 *
 * `<group>` is the sender's consumer group of email.messages (its retry consumer shares the ledger): one
 * ledger per sender deployment, so that a test's or a benchmark's sender, on groups of its own, never
 * takes another deployment's word for what was sent.
 *     sent            "1"   MessageSent was appended
 *     r:<recipient>   JSON  the recipient's entry:
 *       { "state": "accepted", response, host, at }  the server answered 250 (the guard); the outcome
 *                                                   event may not be appended yet
 *       { "state": "deferred", attempt }             MessageDeferred #attempt and its retry record were
 *                                                   appended; the retry schedule owns the recipient
 *       { "state": "done", outcome }                 a final outcome was appended
 *       { "state": "held", error }                   an unknown failure: nothing is retried on its own
 *
 * The guard ("accepted") is written right after the 250, before anything else happens; it is retried
 * a few times, and if Redis still refuses it the handler fails with a non-retriable error (so that
 * nothing re-sends the message blindly). What remains: a sender killed after the receiving server took
 * the message's final dot and before the guard reached Redis re-sends that message once (the lost-reply
 * window of SMTP, RFC 1047; about a millisecond per transaction). The copy carries the same Message-ID.
 */

export type RecipientEntry =
  | { state: 'accepted'; response: string; host: string; at: number }
  | { state: 'deferred'; attempt: number }
  | { state: 'done'; outcome: string }
  | { state: 'held'; error: string };

export interface MessageLedger {
  sent: boolean;
  recipients: Map<string, RecipientEntry>;
}

export interface LedgerUpdate {
  messageId: string;
  recipient: string;
  entry: RecipientEntry;
}

export class DeliveryLedger {
  constructor(
    private readonly redis: Redis,
    private readonly ttlMs: number,
    /** The sender's consumer group of email.messages. */
    readonly group: string,
    readonly namespace = 'sl',
  ) {}

  keyOf(messageId: string): string {
    return `${this.namespace}:sender:${this.group}:message:${messageId}`;
  }

  /** The ledger of each message, in one round trip. */
  async read(messageIds: readonly string[]): Promise<Map<string, MessageLedger>> {
    const ledgers = new Map<string, MessageLedger>();
    if (messageIds.length === 0) return ledgers;
    const pipeline = this.redis.pipeline();
    for (const id of messageIds) pipeline.hgetall(this.keyOf(id));
    const results = await this.exec(pipeline, 'read');
    messageIds.forEach((id, i) => {
      const hash = (results[i] ?? {}) as Record<string, string>;
      const recipients = new Map<string, RecipientEntry>();
      for (const [field, value] of Object.entries(hash)) {
        if (field.startsWith('r:')) recipients.set(field.slice(2), JSON.parse(value) as RecipientEntry);
      }
      ledgers.set(id, { sent: hash.sent === '1', recipients });
    });
    return ledgers;
  }

  async markSent(messageIds: readonly string[]): Promise<void> {
    if (messageIds.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const id of messageIds) {
      pipeline.hset(this.keyOf(id), 'sent', '1');
      pipeline.pexpire(this.keyOf(id), this.ttlMs);
    }
    await this.exec(pipeline, 'markSent');
  }

  /**
   * The guard: the server accepted these recipients. Tried up to 6 times over about 3 s; then a
   * non-retriable DeliveryGuardFailed.
   */
  async markAccepted(messageId: string, recipients: readonly string[], response: string, host: string, at: number) {
    if (recipients.length === 0) return;
    const entry = JSON.stringify({ state: 'accepted', response, host, at } satisfies RecipientEntry);
    try {
      await retry(
        async () => {
          const pipeline = this.redis.pipeline();
          for (const recipient of recipients) pipeline.hset(this.keyOf(messageId), `r:${recipient}`, entry);
          pipeline.pexpire(this.keyOf(messageId), this.ttlMs);
          await this.exec(pipeline, 'markAccepted');
        },
        { maxAttempts: 6, initialDelayMs: 100, maxDelayMs: 1000 },
      );
    } catch (cause) {
      throw new InfrastructureError(
        'DeliveryGuardFailed',
        `message ${messageId} was accepted by ${host} but the guard could not be written: not retried, to send it once`,
        { retriable: false, cause },
      );
    }
  }

  async record(updates: readonly LedgerUpdate[]): Promise<void> {
    if (updates.length === 0) return;
    const pipeline = this.redis.pipeline();
    const keys = new Set<string>();
    for (const { messageId, recipient, entry } of updates) {
      pipeline.hset(this.keyOf(messageId), `r:${recipient}`, JSON.stringify(entry));
      keys.add(this.keyOf(messageId));
    }
    for (const key of keys) pipeline.pexpire(key, this.ttlMs);
    await this.exec(pipeline, 'record');
  }

  private async exec(pipeline: ReturnType<Redis['pipeline']>, what: string): Promise<unknown[]> {
    let results: [Error | null, unknown][] | null;
    try {
      results = await pipeline.exec();
    } catch (cause) {
      throw new InfrastructureError('LedgerUnavailable', `the delivery ledger (${what}) failed: ${String(cause)}`, {
        retriable: true,
        cause,
      });
    }
    const failed = results?.find(([error]) => error);
    if (failed?.[0]) {
      throw new InfrastructureError('LedgerUnavailable', `the delivery ledger (${what}) failed: ${failed[0].message}`, {
        retriable: true,
        cause: failed[0],
      });
    }
    return (results ?? []).map(([, value]) => value);
  }
}
