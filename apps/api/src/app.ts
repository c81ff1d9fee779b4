import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { authenticate } from './auth';
import { consoleApiRoutes } from './console/api';
import { consoleAssets } from './console/assets';
import { SINGLE_BODY_LIMIT, type Api, type ApiDependencies } from './context';
import { notFoundAnswer, registerErrorHandling } from './errors';
import { methodNotAllowed } from './methodNotAllowed';
import { registerMetrics } from './metrics';
import { DOCUMENTED, documentSchema } from './openapi';
import { accountRoutes } from './routes/account';
import { activityRoutes } from './routes/activity';
import { bounceRoutes } from './routes/bounces';
import { emailRoutes } from './routes/email';
import { healthRoutes } from './routes/health';
import { inboundRoutes } from './routes/inbound';
import { serverRoutes } from './routes/server';
import { statsRoutes } from './routes/stats';
import { suppressionRoutes } from './routes/suppressions';
import { webhookDeliveryRoutes } from './routes/webhookDeliveries';
import { webhookRoutes } from './routes/webhooks';
import { templateRoutes } from './routes/templates';

export interface BuildOptions {
  logger?: boolean | FastifyBaseLogger | { level: string };
}

/** Builds the API (routes, auth, errors, OpenAPI, metrics) without listening. */
export async function buildApi(deps: ApiDependencies, options: BuildOptions = {}): Promise<Api> {
  const logger = options.logger;
  const isInstance =
    typeof logger === 'object' && logger !== null && typeof (logger as FastifyBaseLogger).info === 'function';
  const app = Fastify({
    ...(isInstance
      ? { loggerInstance: logger as FastifyBaseLogger }
      : { logger: (logger as boolean | { level: string } | undefined) ?? false }),
    bodyLimit: SINGLE_BODY_LIMIT,
    // Postmark's Java client asks for `/email/` and `/messages/outbound/?count=…`: a trailing slash names the same route.
    routerOptions: { ignoreTrailingSlash: true },
    // Types are not coerced: a To of 5 is an error, not the string "5".
    // DOCUMENTED is for the OpenAPI document only (see openapi.ts): validation ignores it.
    ajv: {
      customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false, keywords: [DOCUMENTED] },
    },
    trustProxy: false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  registerErrorHandling(app);
  app.setNotFoundHandler((request, reply) => {
    const { status, body } = notFoundAnswer(request.method, request.url);
    return reply.code(status).send(body);
  });
  const undeclaredMethods = methodNotAllowed(app);
  // A GET from Postmark's client carries Content-Type: application/json and no body: fine. So may a PUT whose body
  // Postmark documents as empty (PUT /bounces/{id}/activate).
  // Only JSON bodies: any other type (text/plain included, which fastify parses by default) is 415, ErrorCode 409.
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' && ['GET', 'HEAD', 'DELETE', 'PUT'].includes(request.method)) {
      return done(null, undefined);
    }
    try {
      done(null, JSON.parse(body as string));
    } catch (error) {
      const failure = error as Error & { statusCode?: number; code?: string };
      failure.statusCode = 400;
      failure.code = body === '' ? 'FST_ERR_CTP_EMPTY_JSON_BODY' : 'FST_ERR_CTP_INVALID_JSON_BODY';
      done(failure, undefined);
    }
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Sendline API',
        version: '1.0.0',
        description: 'Transactional email. Sending, activity and suppressions use Postmark’s wire format.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          serverToken: { type: 'apiKey', in: 'header', name: 'X-Postmark-Server-Token' },
        },
      },
      security: [{ bearer: [] }, { serverToken: [] }],
    },
    transform: ({ schema, url }) => ({ schema: documentSchema(schema), url }),
  });

  app.decorateRequest('apiKey', null);
  app.addHook('preHandler', authenticate(deps.accounts, deps.keyUsage));
  registerMetrics(app);

  await app.register(healthRoutes(deps));
  // The console's pages (apps/console/dist) under /console/.
  await app.register(consoleAssets());
  // Each route plugin made once, registered at both addresses below.
  const routes = [
    emailRoutes(deps),
    activityRoutes(deps),
    suppressionRoutes(deps),
    bounceRoutes(deps),
    statsRoutes(deps),
    accountRoutes(deps),
    webhookRoutes(deps),
    templateRoutes(deps),
    webhookDeliveryRoutes(deps),
    serverRoutes(deps),
    inboundRoutes(deps),
  ];
  const postmarkRoutes = async (v1: Api): Promise<void> => {
    for (const route of routes) await v1.register(route);
    v1.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  };
  // `/v1` is the documented address. The same routes are served at the root too, undocumented: some Postmark
  // clients resolve their absolute endpoint paths ("/email") against the base address, which drops its path
  // (postmarker's urljoin, the Rust crate's Url::join), so no setting of theirs reaches /v1.
  await app.register(postmarkRoutes, { prefix: '/v1' });
  await app.register(async (root) => {
    root.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });
    await root.register(postmarkRoutes);
  });
  // The web console's JSON endpoints (its pages are served apart, as files).
  if (deps.console) await app.register(consoleApiRoutes(deps, deps.console), { prefix: '/console/api' });
  undeclaredMethods.answerUndeclaredMethods();
  return app;
}
