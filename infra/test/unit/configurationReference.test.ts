import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * docs/configuration.md holds one table of every SENDLINE_* environment variable. This keeps it true: each
 * variable named in the source of the apps, infra/, application/, infra/local/ (its scripts too), bench/ and the
 * official client has a row, and each row names a variable that some of that source reads. Tests are left out:
 * the variables only tests read are not the service's configuration.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const REFERENCE = join(ROOT, 'docs', 'configuration.md');
const VARIABLE = /SENDLINE_[A-Z0-9_]+/g;

/** Where the code that reads the environment lives (relative to the repository's root). */
function sourceRoots(): string[] {
  const apps = readdirSync(join(ROOT, 'apps')).filter((name) => statSync(join(ROOT, 'apps', name)).isDirectory());
  const appRoots = apps.flatMap((name) => {
    const app = join('apps', name);
    const configs = readdirSync(join(ROOT, app)).filter((file) => /\.config\.[cm]?[jt]s$/.test(file));
    return [join(app, 'src'), ...configs.map((file) => join(app, file))];
  });
  return [...appRoots, 'infra/src', 'application/src', 'infra/local/src', 'infra/local/bin', 'bench', 'client/src'];
}

const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', 'test', 'tests', '__tests__']);

function* sourceFiles(path: string): Generator<string> {
  const absolute = join(ROOT, path);
  const stat = statSync(absolute, { throwIfNoEntry: false });
  if (stat === undefined) return;
  if (stat.isFile()) {
    if (!/\.(md|test\.[cm]?[jt]sx?)$/.test(path)) yield path;
    return;
  }
  for (const entry of readdirSync(absolute)) {
    if (SKIPPED_DIRECTORIES.has(entry)) continue;
    yield* sourceFiles(join(path, entry));
  }
}

/** Every SENDLINE_* variable the code names, with the first file that names it. */
function variablesInCode(): Map<string, string> {
  const found = new Map<string, string>();
  for (const root of sourceRoots()) {
    for (const file of sourceFiles(root)) {
      for (const [name] of readFileSync(join(ROOT, file), 'utf8').matchAll(VARIABLE)) {
        if (!found.has(name)) found.set(name, file);
      }
    }
  }
  return found;
}

/** The variables of the reference's table: those named in the first cell of a table row. */
function variablesInReference(): string[] {
  return readFileSync(REFERENCE, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(VARIABLE)].map(([name]) => name));
}

describe('docs/configuration.md', () => {
  const inCode = variablesInCode();
  const inReference = variablesInReference();

  it('finds the variables the code reads (the scan itself works)', () => {
    expect(inCode.get('SENDLINE_SECRET_KEY')).toBeDefined();
    expect(inCode.get('SENDLINE_MX_PORT')).toBeDefined();
    expect(inCode.get('SENDLINE_KAFKA_PORT')).toBe('infra/local/bin/infra');
  });

  it('has a row for every SENDLINE_* variable the code reads', () => {
    const documented = new Set(inReference);
    const missing = [...inCode]
      .filter(([name]) => !documented.has(name))
      .map(([name, file]) => `${name} (read in ${file})`)
      .sort();
    expect(missing, 'variables read in code but missing from docs/configuration.md').toEqual([]);
  });

  it('lists no variable that no code reads', () => {
    const unread = inReference.filter((name) => !inCode.has(name)).sort();
    expect(unread, 'variables in docs/configuration.md that no code reads').toEqual([]);
  });

  it('lists each variable once', () => {
    const repeated = inReference.filter((name, index) => inReference.indexOf(name) !== index);
    expect(repeated, 'variables listed twice in docs/configuration.md').toEqual([]);
  });
});
