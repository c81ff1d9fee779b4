import type { InboundAddresses } from './recipients';

export interface CachedInboundAddressesOptions {
  /** The organization of an inbound hash, or null (AccountsView.organizationOfInboundHash). */
  load: (inboundHash: string) => Promise<string | null>;
  /** How long an inbound hash found is taken without reading the view again. */
  ttlMs: number;
  /** At most this many hashes are held; past it the oldest is forgotten first. */
  maxEntries?: number;
  now?: () => number;
}

/**
 * The organizations of the inbound hashes the MX has seen, kept briefly: every RCPT TO of inbound mail asked the
 * accounts view (a Redis round trip before the RCPT's answer, which a DSN's return path never needs), and the same
 * few addresses take most of the mail. Only what was found is held: a hash set up a moment ago is found at once, and
 * one not found (made up, mistyped) is asked again every time, as before. The view never takes a hash back (a
 * server's settings keep every inbound hash they ever had), so a hash held is never wrong; the TTL only bounds the
 * memory of one that no longer gets mail. A read that fails throws (the MX answers 451).
 */
export class CachedInboundAddresses implements InboundAddresses {
  private readonly held = new Map<string, { organizationId: string; at: number }>();
  private readonly now: () => number;

  constructor(private readonly options: CachedInboundAddressesOptions) {
    this.now = options.now ?? Date.now;
  }

  async organizationOf(inboundHash: string): Promise<string | null> {
    const key = inboundHash.toLowerCase();
    const held = this.held.get(key);
    if (held && this.now() - held.at < this.options.ttlMs) return held.organizationId;
    const organizationId = await this.options.load(key);
    this.held.delete(key);
    if (organizationId !== null) {
      this.held.set(key, { organizationId, at: this.now() });
      const max = this.options.maxEntries ?? 10_000;
      if (this.held.size > max) this.held.delete(this.held.keys().next().value!);
    }
    return organizationId;
  }
}
