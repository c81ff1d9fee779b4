import type { DeliveryOutcome } from '@sendline/domain';
import { InfrastructureError, isCluster, retry, type Redis } from '@sendline/infra';

/** How long a guard waits for its replica on a Redis Cluster (within the client's 800 ms answer deadline). */
const GUARD_REPLICATION_WAIT_MS = 500;

/**
 * The sender's delivery ledger in Redis: what it already did for each message, so that a handler run
 * again (at-least-once consumption: a crash before the commit, a rebalance, a retry record fetched
 * twice) never sends twice what a server already accepted, and never decides twice what it recorded.
 *
 * It is no state machine of its own: where a recipient stands is the domain's RecipientState. The ledger
 * holds the guard — the one thing the events cannot say: a server already answered 250 (`accepted`), or the
 * failure was unknown and it may have (`held`) — and which outcome the sender appended (`deferred`, `done`),
 * which plan.ts reads back into the domain's state (resumeRecipients) so a repeated run decides nothing twice.
 *
 *   <ns>:sender:<group>:message:<messageId>   hash, expires `ttlMs` after its last write
 *
 * `<group>` is the sender's consumer group of email.messages (its retry consumer shares the ledger): one
 * ledger per sender deployment, so that a test's or a benchmark's sender, on groups of its own, never
 * takes another deployment's word for what was sent.
 *     claim           "<topic>:<partition>:<offset>"  the MessageAccepted this ledger delivers (see `read`)
 *     sent            "1"   MessageSent was appended (written with the run's outcomes, see `record`)
 *     r:<recipient>   JSON  the recipient's entry:
 *       { "state": "accepted", response, host, at, returnPath }  the server answered 250 (the guard); the
 *                                                   outcome event may not be appended yet. `at`: Redis's clock
 *                                                   (ms, µs decimals) when the guard was applied; `returnPath`:
 *                                                   the envelope sender it was sent with (absent in guards
 *                                                   written before it was recorded)
 *       { "state": "deferred", attempt }             MessageDeferred #attempt and its retry record were
 *                                                   appended; the retry schedule owns the recipient
 *       { "state": "done", outcome, guardedAt? }     a final outcome was appended; `guardedAt`: the guard's
 *                                                   `at`, when the server had accepted the recipient
 *       { "state": "held", error }                   an unknown failure: nothing is retried on its own
 *
 * The guard ("accepted") is written by each SMTP transaction as soon as its 250 arrives, on its own, before
 * anything else happens (one script, one round trip, on a Redis connection of its own, so it never waits
 * behind the ledger's batch reads and writes); it is retried a few times, and if Redis still refuses it the
 * handler fails with a non-retriable error (so that nothing re-sends the message blindly). What remains: a sender
 * killed after the receiving server answered the message's final dot and before the guard reached Redis re-sends that
 * message once (docs/sender.md, "The window, measured", gives this window as measured under load); so does one killed
 * after the server took the final dot and before it answered (SMTP's lost reply, RFC 1047). The copy carries the same
 * Message-ID.
 *
 * A message is delivered from one MessageAccepted only. With Idempotency-Keys a retried send appends the very
 * same MessageAccepted again (same message id, later offset): the first copy read claims the ledger (`claim`,
 * set once, when its ledger is read, before anything is sent), and every other copy is skipped whole, whatever
 * the state of the first one's delivery (even one dead-lettered after its 250 but without its guard).
 */

export type RecipientEntry =
  | { state: 'accepted'; response: string; host: string; at: number; returnPath?: string }
  | { state: 'deferred'; attempt: number }
  | { state: 'done'; outcome: Exclude<DeliveryOutcome['kind'], 'Deferred'>; guardedAt?: number }
  | { state: 'held'; error: string };

export interface MessageLedger {
  /** The MessageAccepted (`<topic>:<partition>:<offset>`) this message is delivered from, once one claimed it. */
  claim?: string;
  sent: boolean;
  recipients: Map<string, RecipientEntry>;
}

export interface LedgerUpdate {
  messageId: string;
  recipient: string;
  entry: RecipientEntry;
}

/**
 * The guard, applied by Redis in one step: each recipient's "accepted" entry stamped with Redis's own clock
 * (the moment it is applied), the key's expiry renewed. Returns that moment (ms, with µs decimals).
 */
const GUARD_SCRIPT = `
local t = redis.call('TIME')
local us = tonumber(t[2])
local at = string.format('%s%03d.%03d', t[1], math.floor(us / 1000), us % 1000)
local entry = '{"state":"accepted","response":' .. ARGV[2] .. ',"host":' .. ARGV[3] .. ',"at":' .. at ..
  ',"returnPath":' .. ARGV[4] .. '}'
for i = 5, #ARGV do redis.call('HSET', KEYS[1], 'r:' .. ARGV[i], entry) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return at
`;

/** A MessageAccepted to plan: its message, and where it was read (absent for a retry record's attempt). */
export interface LedgerRequest {
  messageId: string;
  /** `<topic>:<partition>:<offset>` of the MessageAccepted: the first copy read claims the message. */
  claim?: string;
}

export class DeliveryLedger {
  private readonly guardRedis: Redis;
  /**
   * Guards a server's 250 earned but Redis did not take in time (it was away longer than the guard's retries):
   * kept in this process, so that the message run again here (the consumer takes a failed batch one event at
   * a time) finds its recipients accepted and never sends them again; written to Redis by the next read that
   * reaches it. Only a process killed meanwhile forgets them (the window docs/sender.md measures).
   */
  private readonly unwritten = new Map<string, Map<string, RecipientEntry>>();

  constructor(
    private readonly redis: Redis,
    private readonly ttlMs: number,
    /** The sender's consumer group of email.messages. */
    readonly group: string,
    options: {
      /** The connection the guards are written on (default `redis`); the sender gives them one of their own. */
      guardRedis?: Redis;
      namespace?: string;
      /** Attempts at writing a guard before it is kept in memory and DeliveryGuardFailed is thrown (default 35, ~30 s). */
      guardAttempts?: number;
    } = {},
  ) {
    this.guardRedis = options.guardRedis ?? redis;
    this.guardAttempts = options.guardAttempts ?? 35;
    this.namespace = options.namespace ?? 'sl';
  }

  readonly namespace: string;
  private readonly guardAttempts: number;

  keyOf(messageId: string): string {
    return `${this.namespace}:sender:${this.group}:message:${messageId}`;
  }

  /**
   * The ledger of each message, in one round trip. A request with a `claim` first claims its message (set
   * once: the first copy of a MessageAccepted read keeps it), so the ledger read back says which copy the
   * message is delivered from.
   */
  async read(requests: readonly LedgerRequest[]): Promise<Map<string, MessageLedger>> {
    const ledgers = new Map<string, MessageLedger>();
    if (requests.length === 0) return ledgers;
    const pipeline = this.redis.pipeline();
    const reads: number[] = [];
    for (const { messageId, claim } of requests) {
      const key = this.keyOf(messageId);
      if (claim !== undefined) {
        pipeline.hsetnx(key, 'claim', claim);
        pipeline.pexpire(key, this.ttlMs);
      }
      reads.push(pipeline.length);
      pipeline.hgetall(key);
    }
    const results = await this.exec(pipeline, 'read');
    const unwritten = new Map(requests.map(({ messageId }) => [messageId, this.unwritten.get(messageId)]));
    await this.writeUnwrittenGuards(requests.map((request) => request.messageId));
    requests.forEach(({ messageId }, i) => {
      const hash = (results[reads[i]!] ?? {}) as Record<string, string>;
      const recipients = new Map<string, RecipientEntry>();
      for (const [field, value] of Object.entries(hash)) {
        if (field.startsWith('r:')) recipients.set(field.slice(2), JSON.parse(value) as RecipientEntry);
      }
      for (const [recipient, entry] of unwritten.get(messageId) ?? []) {
        if (!recipients.has(recipient)) recipients.set(recipient, entry);
      }
      ledgers.set(messageId, {
        ...(hash.claim !== undefined && { claim: hash.claim }),
        sent: hash.sent === '1',
        recipients,
      });
    });
    return ledgers;
  }

  /** Writes the guards of these messages that Redis did not take before; keeps them in memory if it still does not. */
  private async writeUnwrittenGuards(messageIds: readonly string[]): Promise<void> {
    const pending = messageIds.filter((id) => this.unwritten.has(id));
    if (pending.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const id of pending) {
      for (const [recipient, entry] of this.unwritten.get(id)!) {
        pipeline.hsetnx(this.keyOf(id), `r:${recipient}`, JSON.stringify(entry));
      }
      pipeline.pexpire(this.keyOf(id), this.ttlMs);
    }
    await this.exec(pipeline, 'write unwritten guards');
    for (const id of pending) this.unwritten.delete(id);
  }

  /**
   * The guard: the server accepted these recipients, sent with the envelope sender `returnPath`. Sent at once on the guard connection (an explicit
   * pipeline is written to the socket immediately; a lone command would wait for the client's auto-pipelining
   * until the event loop's next turn). Tried for about 30 s; then a non-retriable
   * DeliveryGuardFailed, and the guard is kept in this process's memory (see `unwritten`). Resolves with the moment Redis applied it (Redis's clock, ms).
   */
  async markAccepted(
    messageId: string,
    recipients: readonly string[],
    response: string,
    host: string,
    returnPath: string,
  ): Promise<number> {
    if (recipients.length === 0) return Number.NaN;
    const args = [
      String(this.ttlMs),
      JSON.stringify(response),
      JSON.stringify(host),
      JSON.stringify(returnPath),
      ...recipients,
    ];
    try {
      return await retry(
        async () => {
          const pipeline = this.guardRedis.pipeline().eval(GUARD_SCRIPT, 1, this.keyOf(messageId), ...args);
          // On a Redis Cluster the guard is on its replica too before the send goes on: a master killed right
          // after answering would otherwise fail over to a replica without it, and a retry would send again.
          // (WAIT, on the guard's own connection, answers how many replicas have it; none within the time
          // leaves the guard where a single Redis keeps it, on its master.)
          if (isCluster(this.guardRedis)) pipeline.wait(1, GUARD_REPLICATION_WAIT_MS);
          const [at] = await this.exec(pipeline, 'markAccepted');
          return Number(at);
        },
        // About 30 s: a Redis restarted meanwhile takes the guard, and the transaction waits for it.
        { maxAttempts: this.guardAttempts, initialDelayMs: 100, maxDelayMs: 1000 },
      );
    } catch (cause) {
      const entries = this.unwritten.get(messageId) ?? new Map<string, RecipientEntry>();
      const entry: RecipientEntry = { state: 'accepted', response, host, at: Date.now(), returnPath };
      for (const recipient of recipients) entries.set(recipient, entry);
      this.unwritten.set(messageId, entries);
      throw new InfrastructureError(
        'DeliveryGuardFailed',
        `message ${messageId} was accepted by ${host} but the guard could not be written: not retried, to send it once`,
        { retriable: false, cause },
      );
    }
  }

  /**
   * What a run decided, in one round trip after its outcomes were appended: each recipient's entry, and `sent`
   * for the messages whose MessageSent the run appended. `sent` is not written apart, before the send: a run
   * that fails before this write appends MessageSent again when it runs again, and that is the same event
   * (one event id per message), so the write costs no round trip of its own on the way to the server.
   */
  async record(updates: readonly LedgerUpdate[], sent: readonly string[] = []): Promise<void> {
    if (updates.length === 0 && sent.length === 0) return;
    // One HSET and one PEXPIRE a message, whatever its number of recipients.
    const fields = new Map<string, string[]>();
    const fieldsOf = (messageId: string) => {
      const key = this.keyOf(messageId);
      if (!fields.has(key)) fields.set(key, []);
      return fields.get(key)!;
    };
    for (const { messageId, recipient, entry } of updates)
      fieldsOf(messageId).push(`r:${recipient}`, JSON.stringify(entry));
    for (const messageId of sent) fieldsOf(messageId).push('sent', '1');
    const pipeline = this.redis.pipeline();
    for (const [key, values] of fields) pipeline.hset(key, ...values).pexpire(key, this.ttlMs);
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
