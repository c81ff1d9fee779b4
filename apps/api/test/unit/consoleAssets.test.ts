import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleAssets } from '../../src/console/assets';

const INDEX = '<!doctype html><title>console</title><div id="root"></div>';
const SCRIPT = 'console.log("the console");'.repeat(50);

async function appServing(distDir: string) {
  // As the API is built: a trailing slash names the same route (apps/api/src/app.ts).
  const app = Fastify({ routerOptions: { ignoreTrailingSlash: true } });
  await app.register(consoleAssets({ distDir }));
  return app;
}

describe('the console pages under /console/', () => {
  let dist: string;
  beforeAll(async () => {
    dist = await mkdtemp(join(tmpdir(), 'console-dist-'));
    await mkdir(join(dist, 'assets'));
    await writeFile(join(dist, 'index.html'), INDEX);
    await writeFile(join(dist, 'assets', 'index-AbC123.js'), SCRIPT);
    await writeFile(join(dist, 'assets', 'index-AbC123.js.gz'), gzipSync(SCRIPT));
  });
  afterAll(() => rm(dist, { recursive: true, force: true }));

  it('serves a hashed asset for a year, immutable, gzipped when the browser accepts it', async () => {
    const app = await appServing(dist);
    const plain = await app.inject({ url: '/console/assets/index-AbC123.js' });
    expect(plain.statusCode).toBe(200);
    expect(plain.body).toBe(SCRIPT);
    expect(plain.headers['content-type']).toMatch(/javascript/);
    expect(plain.headers['cache-control']).toMatch(/max-age=31536000/);
    expect(plain.headers['cache-control']).toMatch(/immutable/);
    const gzipped = await app.inject({
      url: '/console/assets/index-AbC123.js',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.rawPayload.length).toBeLessThan(SCRIPT.length);
    await app.close();
  });

  it.each(['/console/', '/console/activity', '/console/activity/abc-123', '/console/sign-in?next=%2Faudit'])(
    'answers index.html, never cached, at the page %s',
    async (url) => {
      const app = await appServing(dist);
      const response = await app.inject({ url });
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe(INDEX);
      expect(response.headers['content-type']).toMatch(/text\/html/);
      expect(response.headers['cache-control']).toBe('no-cache');
      expect(response.headers['content-security-policy']).toMatch(/default-src 'self'/);
      await app.close();
    },
  );

  it.each(['/console', '/console/'])('answers index.html at %s, never redirecting', async (url) => {
    const app = await appServing(dist);
    const response = await app.inject({ url });
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe(INDEX);
    await app.close();
  });

  it('answers a missing asset 404, not the page (a script must never receive HTML)', async () => {
    const app = await appServing(dist);
    const response = await app.inject({ url: '/console/assets/index-old.js' });
    expect(response.statusCode).toBe(404);
    expect(response.body).not.toContain('<!doctype');
    await app.close();
  });

  it('answers an unknown /console/api/ path with the catalogue JSON 404, whatever the method', async () => {
    const app = await appServing(dist);
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      const response = await app.inject({ method, url: '/console/api/no-such-thing' });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({
        ErrorCode: 404,
        Message: expect.stringContaining('/console/api/no-such-thing'),
      });
    }
    await app.close();
  });

  it('never serves a file outside the build', async () => {
    const app = await appServing(join(dist, 'assets'));
    for (const url of [
      '/console/../index.html',
      '/console/%2e%2e/index.html',
      '/console/assets/..%2f..%2findex.html',
    ]) {
      const response = await app.inject({ url });
      expect(response.body).not.toBe(INDEX);
    }
    await app.close();
  });

  it('answers 503 with a page saying to run npm run build when there is no build', async () => {
    const app = await appServing(join(dist, 'not-built'));
    for (const url of ['/console', '/console/', '/console/activity']) {
      const response = await app.inject({ url });
      expect(response.statusCode).toBe(503);
      expect(response.headers['content-type']).toMatch(/text\/html/);
      expect(response.body).toContain('npm run build');
    }
    await app.close();
  });
});
