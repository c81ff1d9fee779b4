import type { FastifyInstance } from 'fastify';
import { errorAnswer } from './errors';

/**
 * 405 with `Allow` for a method a known path does not have (fastify answers it 404, like an unknown path). Call
 * this before registering the routes and `answerUndeclaredMethods` after: every path gets a route for the
 * other methods fastify knows, answered before the body is read (so a body the path would refuse, or one too large,
 * still gets the 405). Unknown paths stay 404.
 */
export function methodNotAllowed(app: FastifyInstance) {
  const methodsByPath = new Map<string, Set<string>>();
  let sealed = false;
  app.addHook('onRoute', (route) => {
    if (sealed) return;
    const methods = methodsByPath.get(route.url) ?? new Set<string>();
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) methods.add(method);
    methodsByPath.set(route.url, methods);
  });
  return {
    answerUndeclaredMethods(): void {
      sealed = true;
      for (const [path, methods] of methodsByPath) {
        const undeclared = app.supportedMethods.filter((method) => !methods.has(method));
        if (undeclared.length === 0) continue;
        const allowed = [...methods].sort().join(', ');
        app.route({
          method: undeclared,
          url: path,
          schema: { hide: true },
          onRequest: async (request, reply) => {
            const { status, body } = errorAnswer('MethodNotAllowed', {
              method: request.method,
              path: request.url.split('?')[0],
              allowed,
            });
            return reply.code(status).header('Allow', allowed).send(body);
          },
          handler: async () => undefined,
        });
      }
    },
  };
}
