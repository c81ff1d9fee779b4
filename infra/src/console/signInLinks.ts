import type { Redis } from 'ioredis';
import { newSecret, secretDigest } from '../crypto/secretDigest';

/** A sign-in link works for 15 minutes. */
export const SIGN_IN_LINK_TTL_MS = 15 * 60 * 1000;

/** Whom a sign-in link signs in: one member of one organization. */
export interface SignInGrant {
  organizationId: string;
  email: string;
}

/**
 * One-time sign-in tokens: stored by digest with a 15-minute expiry; redeeming one deletes it in the same command
 * (GETDEL), so two redemptions racing each other cannot both succeed.
 */
export class SignInLinks {
  constructor(
    private readonly redis: Redis,
    readonly namespace = 'sl',
    private readonly ttlMs = SIGN_IN_LINK_TTL_MS,
  ) {}

  private keyOf(token: string): string {
    return `${this.namespace}:console:signin:${secretDigest(token)}`;
  }

  /** A new token for `grant`; the caller puts it in the link and nowhere else. */
  async issue(grant: SignInGrant): Promise<string> {
    const token = newSecret();
    await this.redis.set(this.keyOf(token), JSON.stringify(grant), 'PX', this.ttlMs);
    return token;
  }

  /** The grant of a live token, which is used up by this call; null when unknown, expired or used. */
  async redeem(token: string): Promise<SignInGrant | null> {
    if (typeof token !== 'string' || token.length < 20 || token.length > 200) return null;
    const json = await this.redis.getdel(this.keyOf(token));
    return json ? (JSON.parse(json) as SignInGrant) : null;
  }
}
