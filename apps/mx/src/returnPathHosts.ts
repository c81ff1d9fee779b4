import type { ReturnPathHosts } from './recipients';

export interface CachedReturnPathHostsOptions {
  /** Every organization's sending domains, lowercase (AccountsView.allReturnPathHosts). */
  load: () => Promise<Set<string>>;
  /** How long a domain found is trusted without reading the view again. */
  ttlMs: number;
  /**
   * A domain not found is looked up again when what we hold is older than this (a domain added a moment ago is
   * found at once, not after `ttlMs`), but no more often: a flood of made-up domains costs one read per interval.
   */
  missRefreshMs?: number;
  now?: () => number;
}

/**
 * The sending domains of every organization, read from the accounts view and kept briefly: a recipient's domain is
 * checked on every RCPT TO, and the view has no index by domain (a read is one round trip per organization,
 * pipelined). One read at a time; a read that fails throws (the MX answers 451: try later), except that a domain
 * already known is still taken.
 */
export class CachedReturnPathHosts implements ReturnPathHosts {
  private held: { names: Set<string>; at: number } | undefined;
  private reading: Promise<Set<string>> | undefined;
  private readonly now: () => number;

  constructor(private readonly options: CachedReturnPathHostsOptions) {
    this.now = options.now ?? Date.now;
  }

  async isReturnPathHost(domain: string): Promise<boolean> {
    const held = this.held;
    const age = held ? this.now() - held.at : Infinity;
    const known = held?.names.has(domain) ?? false;
    if (known && age < this.options.ttlMs) return true;
    if (held && !known && age < Math.min(this.options.missRefreshMs ?? 1000, this.options.ttlMs)) return false;
    try {
      return (await this.read()).has(domain);
    } catch (error) {
      if (known) return true;
      throw error;
    }
  }

  private read(): Promise<Set<string>> {
    this.reading ??= this.options
      .load()
      .then((names) => {
        this.held = { names, at: this.now() };
        return names;
      })
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }
}
