import fastifyStatic from '@fastify/static';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { errorAnswer, notFoundAnswer } from '../errors';

/**
 * The console's pages (issue 13): the files `npm run build` writes into apps/console/dist, served under /console/.
 * - `/console/assets/*`: hashed names (a new build, a new name), cached for a year as immutable, gzipped when the
 *   build wrote a `.gz` beside the file and the browser accepts it;
 * - every other path under /console/ (not /console/api/) answers index.html, never cached, so client-side routes
 *   (`/console/activity/…`) load the app and a new build is picked up at the next load;
 * - an unknown /console/api/ path is the catalogue's JSON 404, like any unknown endpoint;
 * - no build yet: 503 with a page that says to run `npm run build`.
 * The dist folder is looked at on each request: a build made while the API runs is served without a restart.
 */

export const CONSOLE_DIST = fileURLToPath(new URL('../../../console/dist', import.meta.url));

const YEAR_MS = 365 * 24 * 60 * 60 * 1000;

/** The console's own page: its scripts and styles from itself only; images in a message preview may be remote. */
const PAGE_SECURITY_POLICY = [
  "default-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: https: http:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sendline console: not built</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; line-height: 1.5">
<h1>The console is not built yet</h1>
<p>The API serves the console's pages from <code>apps/console/dist</code>, which does not exist.
Run <code>npm run build</code> in the repository (or restart <code>npm start</code>, which builds it), then reload this page.</p>
</body></html>
`;

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** A path below the dist folder that names no parent (`..`), no hidden file and no folder trick. */
function safeRelative(path: string): string | null {
  if (path === '' || path.includes('\0') || path.includes('\\')) return null;
  const parts = path.split('/');
  if (parts.some((part) => part === '' || part === '.' || part === '..' || part.startsWith('.'))) return null;
  return parts.join('/');
}

function sendIndex(reply: FastifyReply, method: string) {
  reply
    .header('Cache-Control', 'no-cache')
    .header('Content-Security-Policy', PAGE_SECURITY_POLICY)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer');
  if (method === 'HEAD') return reply.type('text/html; charset=utf-8').send();
  return reply.sendFile('index.html', { maxAge: 0, immutable: false, cacheControl: false });
}

function notBuilt(reply: FastifyReply) {
  return reply.code(503).header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(NOT_BUILT_PAGE);
}

export function consoleAssets(options: { distDir?: string } = {}) {
  const dist = options.distDir ?? CONSOLE_DIST;
  return async function consoleAssetRoutes(app: FastifyInstance): Promise<void> {
    await app.register(fastifyStatic, { root: dist, serve: false, preCompressed: true });

    // `/console` itself is the overview too (the API ignores a trailing slash, so `/console/` may land here as well).
    app.get('/console', { schema: { hide: true } }, async (request, reply) => {
      if (!(await isFile(join(dist, 'index.html')))) return notBuilt(reply);
      return sendIndex(reply, request.method);
    });

    app.route({
      // Every method: a page only answers GET and HEAD, an unknown /console/api/ path is 404 whatever the method.
      method: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'],
      url: '/console/*',
      schema: { hide: true },
      handler: async (request, reply) => {
        const rest = (request.params as { '*': string })['*'] ?? '';
        const path = rest.split('?')[0] ?? '';
        if (path === 'api' || path.startsWith('api/')) {
          const { status, body } = notFoundAnswer(request.method, request.url);
          return reply.code(status).send(body);
        }
        if (request.method !== 'GET' && request.method !== 'HEAD') {
          const { status, body } = errorAnswer('MethodNotAllowed', {
            method: request.method,
            path: request.url.split('?')[0],
            allowed: 'GET, HEAD',
          });
          return reply.code(status).header('Allow', 'GET, HEAD').send(body);
        }
        if (!(await isFile(join(dist, 'index.html')))) return notBuilt(reply);
        const file = safeRelative(path);
        if (file !== null && file.startsWith('assets/')) {
          if (!(await isFile(join(dist, file)))) {
            // A missing hashed asset is a 404: answering index.html would hand HTML to a <script>.
            return reply
              .code(404)
              .header('Cache-Control', 'no-store')
              .type('text/plain; charset=utf-8')
              .send(`No console asset /console/${file}: the page was built before the last build; reload it.\n`);
          }
          return reply.sendFile(file, { maxAge: YEAR_MS, immutable: true });
        }
        if (file !== null && file !== 'index.html' && (await isFile(join(dist, file)))) {
          return reply.sendFile(file, { maxAge: 0, immutable: false });
        }
        return sendIndex(reply, request.method);
      },
    });
  };
}
