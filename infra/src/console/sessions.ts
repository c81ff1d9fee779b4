import type { Redis } from 'ioredis';
import { newSecret, secretDigest } from '../crypto/secretDigest';

/** A session ends after 12 hours without a request… */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** …and 7 days after sign-in, whatever its use. */
export const SESSION_ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000;

/** A console session: who signed in, to which organization, and its CSRF token. The role is never kept here. */
export interface ConsoleSession {
  organizationId: string;
  email: string;
  csrfToken: string;
  createdAt: number;
}

/**
 * Sessions by the digest of their id, with a Redis expiry of min(idle, what is left of the absolute lifetime),
 * pushed on by each use: an idle session and an old one both disappear on their own.
 */
export class ConsoleSessions {
  constructor(
    private readonly redis: Redis,
    readonly namespace = 'sl',
    private readonly now: () => number = Date.now,
    private readonly limits: { idleMs: number; absoluteMs: number } = {
      idleMs: SESSION_IDLE_MS,
      absoluteMs: SESSION_ABSOLUTE_MS,
    },
  ) {}

  private keyOf(id: string): string {
    return `${this.namespace}:console:session:${secretDigest(id)}`;
  }

  private ttl(createdAt: number): number {
    return Math.min(this.limits.idleMs, createdAt + this.limits.absoluteMs - this.now());
  }

  /** Opens a session; returns its id (for the cookie only) and the session. */
  async open(grant: { organizationId: string; email: string }): Promise<{ id: string; session: ConsoleSession }> {
    const id = newSecret();
    const session: ConsoleSession = { ...grant, csrfToken: newSecret(), createdAt: this.now() };
    await this.redis.set(this.keyOf(id), JSON.stringify(session), 'PX', this.ttl(session.createdAt));
    return { id, session };
  }

  /** The live session of an id, its idle timeout pushed on; null when unknown, idle too long or too old. */
  async use(id: string | undefined): Promise<ConsoleSession | null> {
    if (!id || id.length < 20 || id.length > 200) return null;
    const key = this.keyOf(id);
    const json = await this.redis.get(key);
    if (!json) return null;
    const session = JSON.parse(json) as ConsoleSession;
    const ttl = this.ttl(session.createdAt);
    if (ttl <= 0) {
      await this.redis.del(key);
      return null;
    }
    await this.redis.pexpire(key, ttl);
    return session;
  }

  async close(id: string | undefined): Promise<void> {
    if (id) await this.redis.del(this.keyOf(id));
  }
}
