/**
 * The console's JSON endpoints under /console/api (issue 13; the contract: the pages are built against it). One
 * file per page; this one registers them behind the console's session: the cookie resolved to a member on every
 * request (their role read from the accounts view, so a removed member or a changed role applies at once), and the
 * CSRF header checked on every change. Each endpoint maps to the same use cases, queries and error catalogue as
 * the public API and the admin command line; what a role may do is the domain's (roles.ts).
 */
import cookie from '@fastify/cookie';
import type { Api, ApiDependencies, ConsoleServices } from '../context';
import { ApiError } from '../errors';
import { activityPage } from './activity';
import { auditPage } from './audit';
import { domainsPage } from './domains';
import { inboundPage } from './inbound';
import { keysPage } from './keys';
import { membersPage } from './members';
import { overviewPage } from './overview';
import { CSRF_HEADER, csrfMatches, SESSION_COOKIE, sessionRoutes } from './session';
import { suppressionsPage } from './suppressions';
import { templatesPage } from './templates';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A console endpoint open without a session (sign-in). */
    consolePublic?: boolean;
  }
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The console's endpoints; registered under /console/api by app.ts when the API has the console's services. */
export function consoleApiRoutes(deps: ApiDependencies, services: ConsoleServices) {
  return async function (api: Api): Promise<void> {
    await api.register(cookie);
    api.decorateRequest('consoleMember', null);
    // The console's endpoints are not part of the public API's OpenAPI document.
    api.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });
    // Before the body is read: a request without a session is answered 401 whatever it carries.
    api.addHook('onRequest', async (request) => {
      if (request.routeOptions.config.consolePublic) return;
      const member = await services.signIn.member(request.cookies[SESSION_COOKIE]);
      if (!member) throw new ApiError('ConsoleSignInRequired');
      if (STATE_CHANGING.has(request.method) && !csrfMatches(request.headers[CSRF_HEADER], member.session.csrfToken)) {
        throw new ApiError('ConsoleCsrfRejected');
      }
      request.consoleMember = member;
    });
    await api.register(sessionRoutes(services));
    await api.register(activityPage(deps));
    await api.register(domainsPage(services));
    await api.register(keysPage(deps, services));
    await api.register(suppressionsPage(deps, services));
    await api.register(membersPage(services));
    await api.register(overviewPage(deps));
    await api.register(auditPage(deps));
    await api.register(templatesPage(deps));
    await api.register(inboundPage(deps));
  };
}
