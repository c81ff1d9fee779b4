import { timingSafeEqual } from 'node:crypto';
import type { ConsoleMember } from '@sendline/application';
import { permissionsOf, requireRole, type ConsoleAction } from '@sendline/domain';
import { SESSION_ABSOLUTE_MS } from '@sendline/infra';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Api, ConsoleServices } from '../context';
import { ApiError } from '../errors';

/** Sign-in, sign-out and `me`: the session's endpoints, and what every other console endpoint uses of it. */

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in member of a console request (set by the console's onRequest hook). */
    consoleMember: ConsoleMember | null;
  }
}

export const SESSION_COOKIE = 'sendline_console';
export const CSRF_HEADER = 'x-csrf-token';

export const LINK_SENT = 'If this address belongs to a member, a sign-in link is on its way.';

/** Whether the request's CSRF header is the session's token (compared in constant time). */
export function csrfMatches(header: string | string[] | undefined, expected: string): boolean {
  if (typeof header !== 'string') return false;
  const given = Buffer.from(header);
  const wanted = Buffer.from(expected);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** The signed-in member of a console request. */
export function memberOf(request: FastifyRequest): ConsoleMember {
  if (!request.consoleMember) throw new ApiError('ConsoleSignInRequired');
  return request.consoleMember;
}

/** The member, when their role may take `action`; otherwise 403 naming the role and `doing`. */
export function memberAllowedTo(request: FastifyRequest, action: ConsoleAction, doing: string): ConsoleMember {
  const member = memberOf(request);
  requireRole(member.role, action, doing);
  return member;
}

/** The console's `Me`: who is signed in, where, the CSRF token, and what the role may do (the domain's table). */
export function meOf(member: ConsoleMember) {
  return {
    email: member.email,
    role: member.role,
    organization: member.organization,
    csrfToken: member.session.csrfToken,
    can: permissionsOf(member.role),
  };
}

function setSessionCookie(request: FastifyRequest, reply: FastifyReply, sessionId: string): void {
  reply.setCookie(SESSION_COOKIE, sessionId, {
    path: '/console',
    httpOnly: true,
    sameSite: 'lax',
    secure: request.protocol === 'https',
    maxAge: Math.floor(SESSION_ABSOLUTE_MS / 1000),
  });
}

export function sessionRoutes(services: ConsoleServices) {
  return async function (api: Api): Promise<void> {
    api.post(
      '/sign-in/link',
      {
        config: { consolePublic: true },
        schema: { body: Type.Object({ email: Type.String({ maxLength: 320 }) }) },
      },
      async (request) => {
        const answer = await services.signIn.requestLink(request.body.email, request.ip);
        if (!answer.ok) {
          throw new ApiError(
            'RateLimited',
            { retryAfter: answer.retryAfterSeconds },
            { 'Retry-After': String(answer.retryAfterSeconds) },
          );
        }
        // Sent after the answer (same time for a member and a stranger); a link that could not be sent is logged,
        // never told to the asker (that would tell them the address is a member).
        answer.sent.catch((error: unknown) => request.log.error({ err: error }, 'a sign-in link was not sent'));
        return { Message: LINK_SENT };
      },
    );

    api.post(
      '/sign-in/session',
      {
        config: { consolePublic: true },
        schema: { body: Type.Object({ token: Type.String({ maxLength: 200 }) }) },
      },
      async (request, reply) => {
        const signedIn = await services.signIn.redeem(request.body.token);
        if (!signedIn) throw new ApiError('SignInLinkInvalid');
        setSessionCookie(request, reply, signedIn.sessionId);
        return meOf(signedIn.member);
      },
    );

    api.post('/sign-out', async (request, reply) => {
      await services.signIn.signOut(request.cookies[SESSION_COOKIE]);
      reply.clearCookie(SESSION_COOKIE, { path: '/console' });
      return reply.code(204).send();
    });

    api.get('/me', async (request) => meOf(memberOf(request)));
  };
}
