import { randomUUID } from 'node:crypto';
import { describeCause, InfrastructureError, releaseLeases, renewLeases, type Redis } from '@sendline/infra';

/** Sets the key to the token only if the key holds no other token; 1 when it holds ours now. */
const TAKE = `
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

/** The messages a run holds, until `release`. */
export interface HeldMessages {
  release(): Promise<void>;
}

/**
 * One run of a message at a time across every copy of the sender (docs/scaling.md). Each copy's partitions keep one
 * consumer to a message, but not at every moment: a copy whose batch outlasts a rebalance (a slow batch on a busy
 * machine, the group's rebalance timeout passed) is dropped from the group while it still sends, and the copy given its
 * partitions reads the same messages from the last commit. Both would plan before either's guards were written, and
 * both send. So a run first takes a lease on each of its messages in Redis (`<ns>:sender:<group>:running:<MessageID>`,
 * all of them or none, so two runs never hold each other's half), renewed while it runs; the later run waits for
 * the earlier to end, then plans from its guards and ledger and sends nothing twice. A copy killed mid-run holds its
 * leases until they expire (`ttlMs`): the next run of those messages waits that long, then reads its guards.
 * One key per message (no script over several keys), so the leases work on a Redis Cluster too.
 */
export class MessageLeases {
  constructor(
    private readonly redis: Redis,
    readonly group: string,
    private readonly options: { namespace?: string; ttlMs?: number; retryDelayMs?: number } = {},
  ) {}

  keyOf(messageId: string): string {
    return `${this.options.namespace ?? 'sl'}:sender:${this.group}:running:${messageId}`;
  }

  /** Takes every message's lease (waiting while another run holds any of them), renewed until released. */
  async hold(messageIds: readonly string[]): Promise<HeldMessages> {
    const ttlMs = this.options.ttlMs ?? 10_000;
    const token = randomUUID();
    const keys = [...new Set(messageIds)].map((id) => this.keyOf(id));
    for (;;) {
      const taken = await this.take(keys, token, ttlMs);
      if (taken.every(Boolean)) break;
      // All or none: what this attempt took goes back, so two runs never wait on each other's half.
      await releaseLeases(
        this.redis,
        keys.filter((_, i) => taken[i]),
        token,
      ).catch((cause: unknown) => failed(cause));
      const delay = this.options.retryDelayMs ?? 100;
      await new Promise((resolve) => setTimeout(resolve, delay / 2 + Math.random() * delay));
    }
    const stopRenewing = renewLeases(this.redis, keys, token, ttlMs);
    return {
      release: async () => {
        stopRenewing();
        // A lease not given back expires on its own.
        await releaseLeases(this.redis, keys, token).catch(() => undefined);
      },
    };
  }

  /**
   * Takes each key's lease, the scripts written back to back on the connection (one round trip's wait in all), and
   * not as one pipeline: on a Redis Cluster the keys of one run are in many slots, which a pipeline may not span.
   */
  private async take(keys: string[], token: string, ttlMs: number): Promise<boolean[]> {
    const results = await Promise.all(keys.map((key) => this.redis.eval(TAKE, 1, key, token, String(ttlMs)))).catch(
      (cause: unknown) => failed(cause),
    );
    return results.map((value) => value === 1);
  }
}

/** Redis out of reach: the run is tried again (its leases expire on their own). */
function failed(cause: unknown): never {
  throw new InfrastructureError('SenderLeaseFailed', `the messages' run leases failed: ${describeCause(cause)}`, {
    retriable: true,
    cause,
  });
}
