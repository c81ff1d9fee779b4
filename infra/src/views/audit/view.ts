import { auditSubject, type AuditedEvent } from '@sendline/domain';
import type { Redis } from 'ioredis';
import type { ViewWriter } from '../positions';

/** One change of an organization's account, as the console's audit shows it. */
export interface AuditEntry {
  at: number;
  eventId: string;
  /** The event type: MemberAdded, ApiKeyIssued… */
  action: string;
  subject: string;
  /** Who made it (EventMetadata.actor), or null when it was not recorded. */
  actor: string | null;
}

/**
 * The audit view in Redis: every account event of an organization (template changes included), as an entry of a sorted set by time. Built
 * from the `accounts.history` topic (every account event, never compacted), not from the compacted `accounts`
 * topic, so a replay rebuilds the whole history and not only each entity's latest event.
 *
 *   <ns>:{audit}:<id>               sorted set: JSON AuditEntry, scored by the event's time
 *
 * `{audit}` is the view's hash tag: on a Redis Cluster every key of the view (and its positions) is in one slot,
 * so its guarded script may name any of them. Versions before the cluster kept it at `<ns>:org:<id>:audit`; a
 * replay of the audit view rebuilds it here (docs/services.md, upgrading).
 */
export class AuditView {
  constructor(
    private readonly redis: Redis,
    readonly namespace = 'sl',
  ) {}

  auditKey(organizationId: string): string {
    return `${this.namespace}:{audit}:${organizationId}`;
  }

  /** Whether a key of the namespace is an audit key (the accounts view's replay tells its own keys apart by it). */
  isAuditKey(key: string): boolean {
    return key.startsWith(`${this.namespace}:{audit}:`);
  }

  /** The organization an audit key is of. */
  organizationOf(key: string): string {
    return key.slice(`${this.namespace}:{audit}:`.length);
  }

  /** The entry of an event: the same event gives the same entry, so writing it again changes nothing. */
  static entryOf(event: AuditedEvent): AuditEntry {
    return {
      at: event.metadata.occurredAt,
      eventId: event.metadata.eventId,
      action: event.type,
      subject: auditSubject(event),
      actor: event.metadata.actor ?? null,
    };
  }

  /** The view's write for one event. */
  write(p: ViewWriter, event: AuditedEvent): void {
    p.zadd(
      this.auditKey(event.metadata.organizationId),
      event.metadata.occurredAt,
      JSON.stringify(AuditView.entryOf(event)),
    );
  }

  /** The organization's audit, newest first: `count` entries from `offset`, and how many there are. */
  async entries(
    organizationId: string,
    count: number,
    offset: number,
  ): Promise<{ total: number; entries: AuditEntry[] }> {
    const key = this.auditKey(organizationId);
    const [total, members] = await Promise.all([
      this.redis.zcard(key),
      this.redis.zrevrange(key, offset, offset + count - 1),
    ]);
    return { total, entries: members.map((json) => JSON.parse(json) as AuditEntry) };
  }

  /** Every entry of the organization, oldest first (the fingerprint). */
  async all(organizationId: string): Promise<string[]> {
    return this.redis.zrange(this.auditKey(organizationId), '0', '-1');
  }
}
