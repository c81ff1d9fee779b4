/**
 * Connections open at once per client address: a client over the limit is answered 421 at connect (it comes back
 * later), so one remote host cannot take every connection the server has. Counted by session, so a connection
 * forgotten twice, or one closed before it was counted, never makes the count drift.
 */
export class ConnectionsPerAddress {
  private readonly open = new Map<string, Set<string>>();

  constructor(private readonly limit: number) {}

  /** Counts the session in, or says no when its address already has `limit` connections open. */
  admit(address: string, sessionId: string): boolean {
    const sessions = this.open.get(address) ?? new Set<string>();
    if (sessions.size >= this.limit) return false;
    sessions.add(sessionId);
    this.open.set(address, sessions);
    return true;
  }

  /** The session's connection closed (whether or not it was admitted). */
  release(address: string, sessionId: string): void {
    const sessions = this.open.get(address);
    if (!sessions?.delete(sessionId)) return;
    if (sessions.size === 0) this.open.delete(address);
  }

  count(address: string): number {
    return this.open.get(address)?.size ?? 0;
  }
}
