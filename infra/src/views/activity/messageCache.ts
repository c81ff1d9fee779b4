import type { MessageRow } from './rows';

/** A message's key in memory: its organization and its id. */
export const messageKey = (organizationId: string, messageId: string) => `${organizationId}\u0000${messageId}`;

/** A 53-bit hash of a string (cyrb53): the set of messages seen holds numbers, not strings. */
function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** How many messages the writer remembers having seen before it starts over (about 100 MB). */
const SEEN_LIMIT = 4_000_000;

/** Approximate memory of a cached row (its bodies dominate). */
export function rowWeight(row: MessageRow): number {
  return 1024 + row.text_body.length + row.html_body.length + row.headers_json.length + row.to_json.length;
}

/**
 * What the activity writer remembers between its batches, so most events need no read from ClickHouse:
 * the latest rows of messages still in progress (a status change folds into the row in memory), the
 * oldest evicted first past `maxRows` rows or `maxBytes`; and hashes of the messages it has written (a
 * message it has not seen needs no read-back when its MessageAccepted comes).
 */
export class MessageCache {
  private readonly rows = new Map<string, { row: MessageRow; weight: number }>();
  private bytes = 0;
  private readonly seen = new Set<number>();

  constructor(
    private readonly maxRows: number,
    private readonly maxBytes: number,
  ) {}

  /** The row in memory of a message, if any. */
  row(key: string): MessageRow | undefined {
    return this.rows.get(key)?.row;
  }

  /** Whether this writer has written the message (it may have dropped its row from memory since). */
  hasSeen(key: string): boolean {
    return this.seen.has(hash53(key));
  }

  /**
   * Remembers the rows a batch wrote, as written. True when the set of messages seen was full and started
   * over (a fresh database is then no longer known to hold only what this writer saw).
   */
  rememberBatch(written: ReadonlyMap<string, MessageRow>): boolean {
    let startedOver = false;
    if (this.seen.size + written.size > SEEN_LIMIT) {
      this.seen.clear();
      startedOver = true;
    }
    for (const [key, row] of written) {
      this.remember(key, row);
      this.seen.add(hash53(key));
    }
    return startedOver;
  }

  /** Forgets the rows held in memory (the next state change reads them back). */
  clear(): void {
    this.rows.clear();
    this.bytes = 0;
  }

  private remember(key: string, row: MessageRow): void {
    if (row.completed_at_ms > 0) {
      // Every recipient has its final outcome: nothing more will change it, so it need not stay in memory.
      const done = this.rows.get(key);
      if (done) {
        this.bytes -= done.weight;
        this.rows.delete(key);
      }
      return;
    }
    const old = this.rows.get(key);
    if (old) {
      this.rows.delete(key);
      if (old.row === row) {
        this.rows.set(key, old);
        return;
      }
      this.bytes -= old.weight;
    }
    const weight = rowWeight(row);
    this.rows.set(key, { row, weight });
    this.bytes += weight;
    while (this.rows.size > this.maxRows || this.bytes > this.maxBytes) {
      const oldest = this.rows.entries().next();
      if (oldest.done) break;
      this.bytes -= oldest.value[1].weight;
      this.rows.delete(oldest.value[0]);
    }
  }
}
