/**
 * The published build: `tsup` must produce an ESM file, a CommonJS file and
 * declarations, and Node must load each through the package's "exports" map
 * (require → dist/index.cjs, import → dist/index.js) and make a working call.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../src';

const run = promisify(execFile);
const clientDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = resolve(clientDir, '..');
const dist = join(clientDir, 'dist');

// A script run by plain Node: it makes one real call through a fake fetch, so
// a bundle that loads but is broken still fails.
const probe = (load: string) => `
${load}
const meAnswer = { organization: { id: 'org_1', name: 'Acme' }, key: { id: 'k', name: 'n', mode: 'live', scopes: [], prefix: 'p' } };
const client = new Client('sl_live_x', {
  baseUrl: 'https://api.test.example/v1',
  fetch: async (url, init) => new Response(JSON.stringify(meAnswer), { status: url.endsWith('/me') && init.headers.Authorization === 'Bearer sl_live_x' ? 200 : 500 }),
});
const broken = new Client('sl_live_x', { fetch: async () => new Response('nope', { status: 502 }) });
Promise.all([client.me(), broken.me().catch((e) => e)]).then(([me, error]) => {
  console.log(JSON.stringify({
    org: me.organization.name,
    errorIsSendlineError: error instanceof SendlineError,
    errorCode: error.code,
    staging: STAGING_BASE_URL,
    resolved: RESOLVED,
  }));
});
`;

async function distIsStale(): Promise<boolean> {
  const outputs = ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts'].map((f) => join(dist, f));
  if (!outputs.every((f) => existsSync(f))) return true;
  const oldestOutput = Math.min(...(await Promise.all(outputs.map(async (f) => (await stat(f)).mtimeMs))));
  const sources = [
    ...(await readdir(join(clientDir, 'src'))).map((f) => join(clientDir, 'src', f)),
    join(clientDir, 'package.json'),
    join(clientDir, 'tsup.config.ts'),
    join(clientDir, 'tsconfig.build.json'),
  ];
  const newestSource = Math.max(...(await Promise.all(sources.map(async (f) => (await stat(f)).mtimeMs))));
  return newestSource >= oldestOutput;
}

async function node(args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, args, { cwd: repoRoot, timeout: 30_000 });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe('the built package', () => {
  beforeAll(async () => {
    // Build when dist/ is missing or older than anything it is built from, so the test never checks a stale build.
    if (await distIsStale()) await run('npx', ['tsup', '--silent'], { cwd: clientDir, timeout: 90_000 });
  }, 120_000);

  it('writes dist/index.js, dist/index.cjs and declarations for both', () => {
    for (const file of ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts']) {
      expect(existsSync(join(dist, file)), file).toBe(true);
    }
  });

  it('loads with require() through the "require" condition', async () => {
    const out = await node([
      '-e',
      probe(`
        const { Client, SendlineError, STAGING_BASE_URL } = require('@sendline/client');
        const RESOLVED = require.resolve('@sendline/client');
      `),
    ]);
    expect(out).toEqual({
      org: 'Acme',
      errorIsSendlineError: true,
      errorCode: 'invalid_response',
      staging: 'https://api.staging.sendline.dev/v1',
      resolved: join(dist, 'index.cjs'),
    });
  });

  it('loads with import through the "import" condition', async () => {
    const out = await node([
      '--input-type=module',
      '-e',
      probe(`
        import { Client, SendlineError, STAGING_BASE_URL } from '@sendline/client';
        import { fileURLToPath } from 'node:url';
        const RESOLVED = fileURLToPath(import.meta.resolve('@sendline/client'));
      `),
    ]);
    expect(out).toEqual({
      org: 'Acme',
      errorIsSendlineError: true,
      errorCode: 'invalid_response',
      staging: 'https://api.staging.sendline.dev/v1',
      resolved: join(dist, 'index.js'),
    });
  });

  it('has no runtime imports at all, so nothing Node-only reaches edge runtimes', async () => {
    const esm = await readFile(join(dist, 'index.js'), 'utf8');
    const cjs = await readFile(join(dist, 'index.cjs'), 'utf8');
    expect(esm).not.toMatch(/^\s*import\s/m);
    expect(esm).not.toMatch(/\bimport\(/);
    expect(esm).not.toMatch(/\brequire\(/);
    expect(cjs).not.toMatch(/\brequire\(/);
    expect(esm).not.toMatch(/\bBuffer\b/);
  });

  it('declares zero runtime dependencies and the version the code reports', async () => {
    const pkg = JSON.parse(await readFile(join(clientDir, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg.dependencies).toBeUndefined();
    expect(pkg.peerDependencies).toBeUndefined();
    expect(pkg.version).toBe(VERSION);
  });

  it('its declarations type-check for ESM and CommonJS consumers without Node types', async () => {
    // A throwaway consumer project that sees the package the way an installed one would.
    const project = await mkdtemp(join(tmpdir(), 'sendline-client-consumer-'));
    try {
      await mkdir(join(project, 'node_modules', '@sendline'), { recursive: true });
      await symlink(clientDir, join(project, 'node_modules', '@sendline', 'client'), 'dir');
      const consumer = (load: string) => `${load}
const client = new Client('sl_test_x', { timeoutMs: 1000, fetch: globalThis.fetch });
export async function main(): Promise<string> {
  const sent: SendResult = await client.emails.send({ from: 'a@example.com', to: ['b@example.org'], textBody: 'x' });
  const results = await client.emails.sendBatch([{ from: 'a@example.com', to: 'b@example.org' }]);
  for (const r of results) if (!r.ok) return r.message + r.errorCode;
  try { await client.me(); } catch (e) { if (e instanceof SendlineError && e.code === 'timeout') return String(e.retryAfter); }
  return sent.messageId;
}
`;
      await writeFile(
        join(project, 'esm.mts'),
        consumer(`import { Client, SendlineError, type SendResult } from '@sendline/client';`),
      );
      await writeFile(
        join(project, 'cjs.cts'),
        consumer(`import { Client, SendlineError, type SendResult } from '@sendline/client';`),
      );
      await writeFile(
        join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            noEmit: true,
            strict: true,
            module: 'nodenext',
            moduleResolution: 'nodenext',
            target: 'es2022',
            lib: ['es2022', 'dom'],
            types: [],
            // Our declarations come out of tsup's own type-check; this checks how a consumer sees them.
            skipLibCheck: true,
          },
          files: ['esm.mts', 'cjs.cts'],
        }),
      );
      const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
      const result = await run(process.execPath, [tsc, '-p', '.'], { cwd: project, timeout: 60_000 }).catch(
        (e: Error & { stdout?: string }) => ({ stdout: e.stdout || e.message }),
      );
      expect(result.stdout).toBe('');
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  }, 60_000);
});
