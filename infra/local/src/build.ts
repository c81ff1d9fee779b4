/**
 * `npm run build`: compiles every long-running app (and the admin command line) to JavaScript,
 * `apps/<app>/dist/main.js` (and the chunks it imports, beside it) with source maps, and builds the console
 * (apps/console/scripts/build.ts), both at once. `node --enable-source-maps apps/<app>/dist/main.js` then runs the app with no TypeScript loader
 * (docs/operations.md).
 *
 * - The workspace packages (@sendline/domain, infra, application, schemas…) are bundled in: their package.json
 *   points at TypeScript sources, which node alone cannot load. Everything from node_modules stays external and is
 *   loaded from the repository's node_modules at run time, as with tsx.
 * - Files read at run time beside a source (the Avro schemas, ClickHouse's migrations, the console's built pages)
 *   are found where they are in the repository: in each bundled module, `import.meta.url` is its source file's
 *   address relative to the bundle (`new URL('../../../infra/src/…', import.meta.url)`), so a path computed from it
 *   is the same as under tsx, wherever the repository is installed.
 * - The bundles define __COMPILED__: a compiled app takes its settings from the environment only, never from
 *   a development `.local/services.env` (infra/src/config.ts, loadLocalServicesEnv).
 */
import { build, type Plugin } from 'esbuild';
import { randomUUID } from 'node:crypto';
import { readFile, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPOSITORY = fileURLToPath(new URL('../../..', import.meta.url));

/** The apps compiled, each from apps/<app>/src/main.ts to apps/<app>/dist/main.js. */
export const COMPILED_APPS = ['api', 'sender', 'projector', 'webhooks', 'mx', 'returns', 'inbound', 'admin'] as const;
export type CompiledApp = (typeof COMPILED_APPS)[number];

export const entryOf = (app: CompiledApp, root = REPOSITORY) => join(root, 'apps', app, 'src', 'main.ts');
export const bundleOf = (app: CompiledApp, root = REPOSITORY) => join(root, 'apps', app, 'dist', 'main.js');

/**
 * The workspace packages are bundled (their sources are TypeScript); every other package is loaded at run time.
 * A file inside a package that declares no `exports` named without its extension (`mailauth/lib/dkim/verify`,
 * as tsx accepts) is named with it (`…/verify.js`), as node's ESM loader requires.
 */
const externalPackages: Plugin = {
  name: 'external-packages',
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@sendline/')) return undefined;
      return { path: withExtension(args.path, args.importer), external: true };
    });
  },
};

function withExtension(specifier: string, importer: string): string {
  const parts = specifier.split('/');
  const nameLength = specifier.startsWith('@') ? 2 : 1;
  if (specifier.startsWith('node:') || parts.length <= nameLength || extname(specifier) !== '') return specifier;
  const name = parts.slice(0, nameLength).join('/');
  const require = createRequire(importer);
  const manifest = require(`${name}/package.json`) as { exports?: unknown };
  if (manifest.exports !== undefined) return specifier;
  const resolved = require.resolve(specifier);
  const root = dirname(require.resolve(`${name}/package.json`));
  return `${name}/${relative(root, resolved).split('\\').join('/')}`;
}

/** In each bundled module that reads `import.meta.url`, that module's own address, relative to the bundle. */
function sourceAddresses(outdir: string): Plugin {
  return {
    name: 'source-addresses',
    setup(builder) {
      builder.onLoad({ filter: /\.ts$/ }, async (args) => {
        const contents = await readFile(args.path, 'utf8');
        if (!contents.includes('import.meta.url')) return { contents, loader: 'ts' };
        const fromBundle = relative(outdir, args.path).split('\\').join('/');
        const address = `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`;
        return {
          contents: contents.replaceAll('import.meta.url', address),
          loader: 'ts',
          resolveDir: dirname(args.path),
        };
      });
    },
  };
}

/** Compiles `apps` (default: every one) into their dist/ folders; answers how long it took. */
export async function buildApps(apps: readonly CompiledApp[] = COMPILED_APPS): Promise<{ seconds: number }> {
  const started = performance.now();
  await Promise.all(
    apps.map(async (app) => {
      // Written into a folder of its own beside dist/ (same depth: the same relative addresses), then put in
      // place with two renames: an app started meanwhile finds the whole of the old build or of the new one.
      const dist = dirname(bundleOf(app));
      const outdir = join(dirname(dist), `.dist-${process.pid}-${randomUUID().slice(0, 8)}`);
      try {
        await build({
          entryPoints: { main: entryOf(app) },
          outdir,
          // A module imported with import() is a chunk of its own, loaded when imported: the API's primary process,
          // which only starts workers, loads none of the HTTP app's packages (fastify…).
          splitting: true,
          // Beside main.js: the addresses the source-addresses plugin writes are relative to this folder.
          chunkNames: '[name]-[hash]',
          bundle: true,
          platform: 'node',
          format: 'esm',
          target: 'node20',
          sourcemap: 'linked',
          // Stack traces need the mappings, not the sources: the sources are in the repository.
          sourcesContent: false,
          define: { __COMPILED__: 'true' },
          plugins: [externalPackages, sourceAddresses(outdir)],
          logLevel: 'warning',
          legalComments: 'none',
        });
        const previous = `${outdir}-previous`;
        await rename(dist, previous).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
        });
        await rename(outdir, dist);
        await rm(previous, { recursive: true, force: true });
      } finally {
        // A failed build leaves nothing behind (after a good one the folder is dist/ already).
        await rm(outdir, { recursive: true, force: true });
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000 };
}

async function main(): Promise<void> {
  const started = performance.now();
  // The console's build is imported here, not at the top: an app-only build (the compiled start's test) needs no Vite.
  const { buildConsole, kB, BUDGET_BYTES } = await import('../../../apps/console/scripts/build');
  const [apps, consoleSize] = await Promise.all([buildApps(), buildConsole()]);
  console.log(
    `apps compiled into apps/<app>/dist/main.js in ${apps.seconds.toFixed(1)} s: ${COMPILED_APPS.join(', ')}`,
  );
  console.log(
    `console built into apps/console/dist in ${consoleSize.seconds.toFixed(1)} s: JavaScript shipped ` +
      `${kB(consoleSize.gzipped)} gzipped (${kB(consoleSize.raw)} raw, ${consoleSize.files} file` +
      `${consoleSize.files === 1 ? '' : 's'}; budget ${kB(BUDGET_BYTES)})`,
  );
  console.log(`build done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  if (consoleSize.gzipped > BUDGET_BYTES) {
    console.error(
      `the console's JavaScript is over its budget: ${kB(consoleSize.gzipped)} gzipped > ${kB(BUDGET_BYTES)}`,
    );
    process.exitCode = 1;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
