import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { authenticate } from './auth';
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
import { statsRoutes } from './routes/stats';
import { suppressionRoutes } from './routes/suppressions';
import { webhookDeliveryRoutes } from './routes/webhookDeliveries';
import { webhookRoutes } from './routes/webhooks';

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
  app.addHook('preHandler', authenticate(deps.accounts));
  registerMetrics(app);

  await app.register(healthRoutes(deps));
  await app.register(
    async (v1) => {
      await v1.register(emailRoutes(deps));
      await v1.register(activityRoutes(deps));
      await v1.register(suppressionRoutes(deps));
      await v1.register(bounceRoutes(deps));
      await v1.register(statsRoutes(deps));
      await v1.register(accountRoutes(deps));
      await v1.register(webhookRoutes(deps));
      await v1.register(webhookDeliveryRoutes(deps));
      v1.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    },
    { prefix: '/v1' },
  );
  undeclaredMethods.answerUndeclaredMethods();
  return app;
}
