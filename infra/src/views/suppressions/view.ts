import type { SuppressionEvent, SuppressionOrigin, SuppressionReason } from '@sendline/domain';
import type { Redis } from 'ioredis';
import type { ViewWriter } from '../positions';

export interface SuppressionEntry {
  emailAddress: string;
  reason: SuppressionReason;
  origin: SuppressionOrigin;
  createdAt: number;
}

/**
 * The suppression view in Redis: one hash per organization, lowercased address →
 * `{reason, origin, createdAt}`. Built from `email.suppressions`; read by the API
 * to split a recipient list in one round trip. Applying an event twice changes
 * nothing (a duplicate SuppressionAdded keeps the first createdAt).
 */
export class SuppressionView {
  constructor(
    private readonly redis: Redis,
    /** Key namespace; a replay builds into another namespace, then swaps. */
    readonly namespace = 'sl',
  ) {}

  keyOf(organizationId: string): string {
    return `${this.namespace}:{suppressions}:${organizationId}`;
  }

  get organizationsKey(): string {
    return `${this.namespace}:{suppressions}:organizations`;
  }

  /** The view's writes for one event (the projector adds them to its batch, with the view's position). */
  write(writer: ViewWriter, event: SuppressionEvent): void {
    const key = this.keyOf(event.metadata.organizationId);
    const address = event.data.emailAddress.toLowerCase();
    if (event.type === 'SuppressionAdded') {
      const { reason, origin, createdAt } = event.data;
      writer.hsetnx(key, address, JSON.stringify({ reason, origin, createdAt }));
      writer.sadd(this.organizationsKey, event.metadata.organizationId);
    } else {
      writer.hdel(key, address);
    }
  }

  /** Applies events at once, without a position (a writer reading its own write right after the broker's ack). */
  async apply(events: readonly SuppressionEvent[]): Promise<void> {
    if (events.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const event of events) this.write(pipeline, event);
    const results = await pipeline.exec();
    const failed = results?.find(([error]) => error);
    if (failed?.[0]) throw failed[0];
  }

  /** The addresses among `addresses` that are suppressed (compared lowercased). One round trip. */
  async suppressedAmong(organizationId: string, addresses: readonly string[]): Promise<Set<string>> {
    if (addresses.length === 0) return new Set();
    const lowered = addresses.map((address) => address.toLowerCase());
    const values = await this.redis.hmget(this.keyOf(organizationId), ...lowered);
    return new Set(lowered.filter((_, i) => values[i] !== null));
  }

  /** `suppressedAmong` for several recipient lists at once, in one round trip. */
  async suppressedAmongMany(organizationId: string, lists: readonly (readonly string[])[]): Promise<Set<string>[]> {
    const lowered = lists.map((addresses) => addresses.map((address) => address.toLowerCase()));
    const unique = [...new Set(lowered.flat())];
    // One HMGET for every address of every list: one command, which auto-pipelining sends along with
    // the other reads of concurrent requests.
    const values = unique.length > 0 ? await this.redis.hmget(this.keyOf(organizationId), ...unique) : [];
    const suppressed = new Set(unique.filter((_, i) => values[i] !== null));
    return lowered.map((addresses) => new Set(addresses.filter((address) => suppressed.has(address))));
  }

  /** How many addresses the organization suppresses (Postmark's InactiveMails). One round trip. */
  count(organizationId: string): Promise<number> {
    return this.redis.hlen(this.keyOf(organizationId));
  }

  async list(organizationId: string): Promise<SuppressionEntry[]> {
    const all = await this.redis.hgetall(this.keyOf(organizationId));
    return Object.entries(all)
      .map(([emailAddress, json]) => ({
        emailAddress,
        ...(JSON.parse(json) as Omit<SuppressionEntry, 'emailAddress'>),
      }))
      .sort((a, b) => a.createdAt - b.createdAt || a.emailAddress.localeCompare(b.emailAddress));
  }

  async organizations(): Promise<string[]> {
    return (await this.redis.smembers(this.organizationsKey)).sort();
  }
}
