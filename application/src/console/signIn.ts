import { normalizeMemberEmail, type Role } from '@sendline/domain';
import type {
  AccountsView,
  ConsoleSession,
  ConsoleSessions,
  RateLimit,
  RateLimiter,
  SignInLinks,
} from '@sendline/infra';
import { SystemMailRefused, type SystemMail } from '../systemMail';

/** Links asked for one address: 5 per 15 minutes. */
export const SIGN_IN_LIMIT_PER_ADDRESS: RateLimit = { limit: 5, windowMs: 15 * 60 * 1000 };
/** Links asked from one client address: 20 per 15 minutes. */
export const SIGN_IN_LIMIT_PER_CLIENT: RateLimit = { limit: 20, windowMs: 15 * 60 * 1000 };

export const SIGN_IN_SUBJECT = 'Sign in to Sendline';
export const SIGN_IN_TAG = 'console-sign-in';

export interface ConsoleSignInOptions {
  accounts: AccountsView;
  links: SignInLinks;
  sessions: ConsoleSessions;
  limiter: RateLimiter;
  systemMail: SystemMail;
  /** Where the console is served, e.g. `http://127.0.0.1:3000` (configuration, never a request's Host header). */
  consoleUrl: string;
  /** Default: SIGN_IN_LIMIT_PER_ADDRESS and SIGN_IN_LIMIT_PER_CLIENT. */
  limits?: { perAddress: RateLimit; perClient: RateLimit };
}

/** The link a token signs in with: in a fragment, so the token reaches no server log and no Referer. */
export function signInLink(consoleUrl: string, token: string): string {
  return `${consoleUrl.replace(/\/+$/, '')}/console/sign-in#token=${token}`;
}

/** A signed-in member as each request sees them: the role read from the accounts view, never from the session. */
export interface ConsoleMember {
  session: ConsoleSession;
  email: string;
  role: Role;
  organization: { id: string; name: string };
}

export type LinkRequest =
  | {
      ok: true;
      /**
       * The links being sent (none for a stranger): the answer does not wait for them, so it takes as long for a
       * member as for a stranger. Never rejects unhandled: a caller that wants the failure (a log) catches it.
       */
      sent: Promise<{ organizationId: string; messageId: string }[]>;
    }
  | { ok: false; retryAfterSeconds: number };

/**
 * Passwordless sign-in. `requestLink` answers the same for a member and a stranger (no account enumeration): it
 * counts the request against the address's and the client's limits, and only then, for each organization the
 * address is a member of, issues a one-time token and sends its link as system mail — after answering, so the
 * answer's time does not tell a member (a token and a Kafka append) from a stranger (one lookup) either. `redeem` uses the token up
 * and opens a session; `member` resolves a session on each request, so a removed member is signed out and a
 * changed role applies at once.
 */
export class ConsoleSignIn {
  constructor(private readonly options: ConsoleSignInOptions) {}

  /** The link a token signs in with. */
  linkFor(token: string): string {
    return signInLink(this.options.consoleUrl, token);
  }

  /** Throws DomainError 'InvalidEmail' for a string that is not one address; otherwise the same answer for all. */
  async requestLink(emailInput: string, clientIp: string): Promise<LinkRequest> {
    const email = normalizeMemberEmail(emailInput);
    const { limiter } = this.options;
    const limits = this.options.limits ?? {
      perAddress: SIGN_IN_LIMIT_PER_ADDRESS,
      perClient: SIGN_IN_LIMIT_PER_CLIENT,
    };
    const [perAddress, perClient] = await Promise.all([
      limiter.hit(`console-sign-in:address:${email}`, limits.perAddress),
      limiter.hit(`console-sign-in:client:${clientIp}`, limits.perClient),
    ]);
    for (const limit of [perAddress, perClient]) {
      if (!limit.allowed) return { ok: false, retryAfterSeconds: limit.retryAfterSeconds };
    }
    const sent = this.sendLinks(email);
    sent.catch(() => undefined);
    return { ok: true, sent };
  }

  /** One link per organization `email` is a member of (none for a stranger). */
  async sendLinks(email: string): Promise<{ organizationId: string; messageId: string }[]> {
    const memberships = await this.options.accounts.membershipsOf(email);
    const sent: { organizationId: string; messageId: string }[] = [];
    for (const { organizationId } of memberships) {
      const messageId = await this.sendLink(organizationId, email);
      if (messageId) sent.push({ organizationId, messageId });
    }
    return sent;
  }

  /**
   * A sign-in link to one member of one organization (a member just invited gets theirs at once); the MessageID, or
   * undefined when the send path refused the address (suppressed: no link, as no message, reaches it).
   */
  async sendLink(organizationId: string, email: string, invitedBy?: string): Promise<string | undefined> {
    const organization = await this.options.accounts.organization(organizationId);
    const token = await this.options.links.issue({ organizationId, email: email.toLowerCase() });
    const link = this.linkFor(token);
    const name = organization?.name ?? organizationId;
    const opening = invitedBy
      ? `${invitedBy} added you to the Sendline console of ${name}. Sign in:`
      : `Sign in to the Sendline console of ${name}:`;
    try {
      const { messageId } = await this.options.systemMail.send({
        to: [email],
        subject: SIGN_IN_SUBJECT,
        textBody:
          `${opening}\n\n${link}\n\n` +
          'The link works once, for 15 minutes. If you did not ask for it, ignore this email.\n',
        htmlBody:
          `<p>${escapeHtml(opening)}</p>` +
          `<p><a href="${escapeHtml(link)}">Sign in</a></p>` +
          '<p>The link works once, for 15 minutes. If you did not ask for it, ignore this email.</p>',
        tag: SIGN_IN_TAG,
      });
      return messageId;
    } catch (error) {
      // A suppressed address gets no link (as any message to it): the answer stays the same for everyone.
      if (!(error instanceof SystemMailRefused)) throw error;
      return undefined;
    }
  }

  /** Uses the token up and opens a session for its member; null when the token is unknown, expired or used, or the member is gone. */
  async redeem(token: string): Promise<{ sessionId: string; member: ConsoleMember } | null> {
    const grant = await this.options.links.redeem(token);
    if (!grant) return null;
    if (!(await this.options.accounts.member(grant.organizationId, grant.email))) return null;
    const { id, session } = await this.options.sessions.open(grant);
    const member = await this.memberOf(session);
    return member ? { sessionId: id, member } : null;
  }

  /** The member of a session id (its idle timeout pushed on), or null: no session, expired, or no longer a member. */
  async member(sessionId: string | undefined): Promise<ConsoleMember | null> {
    const session = await this.options.sessions.use(sessionId);
    return session ? this.memberOf(session) : null;
  }

  async signOut(sessionId: string | undefined): Promise<void> {
    await this.options.sessions.close(sessionId);
  }

  private async memberOf(session: ConsoleSession): Promise<ConsoleMember | null> {
    const [member, organization] = await Promise.all([
      this.options.accounts.member(session.organizationId, session.email),
      this.options.accounts.organization(session.organizationId),
    ]);
    if (!member || !organization) return null;
    return {
      session,
      email: session.email,
      role: member.role,
      organization: { id: organization.id, name: organization.name },
    };
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
