/**
 * `npm run build`: builds the console into apps/console/dist (Vite), then prints the gzipped size of the
 * JavaScript it ships and fails above the budget (issue 13: under 250 kB).
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';

export const CONSOLE_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DIST = join(CONSOLE_ROOT, 'dist');
export const BUDGET_BYTES = 250 * 1024;

/**
 * Writes `<file>.gz` beside every script and stylesheet under dist/assets (the API sends it to a browser that
 * accepts gzip: apps/api/src/console/assets.ts), and answers the JavaScript's raw and gzipped bytes: the shipped size.
 */
export async function compressAssets(dist = DIST): Promise<{ files: number; raw: number; gzipped: number }> {
  const assets = join(dist, 'assets');
  let raw = 0;
  let gzipped = 0;
  let files = 0;
  for (const name of await readdir(assets)) {
    if (!/\.(js|css)$/.test(name)) continue;
    const content = await readFile(join(assets, name));
    const compressed = gzipSync(content, { level: 9 });
    await writeFile(join(assets, `${name}.gz`), compressed);
    if (!name.endsWith('.js')) continue;
    files += 1;
    raw += content.length;
    gzipped += compressed.length;
  }
  return { files, raw, gzipped };
}

export const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;

/** Builds the console into dist/ and answers the JavaScript it ships (raw and gzipped bytes). */
export async function buildConsole(): Promise<{ files: number; raw: number; gzipped: number; seconds: number }> {
  const started = performance.now();
  await build({ configFile: join(CONSOLE_ROOT, 'vite.config.ts'), logLevel: 'warn' });
  const size = await compressAssets();
  return { ...size, seconds: (performance.now() - started) / 1000 };
}

async function main(): Promise<void> {
  const size = await buildConsole();
  console.log(
    `console built into apps/console/dist in ${size.seconds.toFixed(1)} s: JavaScript shipped ${kB(size.gzipped)} gzipped ` +
      `(${kB(size.raw)} raw, ${size.files} file${size.files === 1 ? '' : 's'}; budget ${kB(BUDGET_BYTES)})`,
  );
  if (size.gzipped > BUDGET_BYTES) {
    console.error(`the console's JavaScript is over its budget: ${kB(size.gzipped)} gzipped > ${kB(BUDGET_BYTES)}`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
