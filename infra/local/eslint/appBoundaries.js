/**
 * The lint rule `sendline/no-cross-app-imports`: no app imports another app. A file under apps/<a>/ may import its
 * own app's files and the libraries (domain, schemas, infra, application, client), never '@sendline/<b>' for another
 * app b, nor a relative path that leads into apps/<b>/. What two apps share belongs in infra/ (mechanics) or
 * application/ (use cases): docs/architecture.md. Static imports, `export … from` and dynamic `import()` are checked.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const APPS_DIR = join(ROOT, 'apps');

/** Each app's folder name and its package name (from its package.json). */
const APPS = readdirSync(APPS_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(APPS_DIR, entry.name, 'package.json')))
  .map((entry) => ({
    dir: entry.name,
    name: JSON.parse(readFileSync(join(APPS_DIR, entry.name, 'package.json'), 'utf8')).name,
  }));

/** The app a path lies in (its folder name), or undefined outside apps/. */
function appOf(path) {
  const rel = relative(APPS_DIR, path);
  if (rel.startsWith('..') || rel === '') return undefined;
  return rel.split(sep)[0];
}

const noCrossAppImports = {
  meta: {
    type: 'problem',
    docs: { description: 'an app imports no other app: shared code belongs in infra/ or application/' },
    schema: [],
    messages: {
      crossApp:
        "apps/{{from}} imports apps/{{to}} ('{{source}}'): move what they share into infra/ or application/ (docs/architecture.md)",
    },
  },
  create(context) {
    const filename = context.filename;
    const from = appOf(filename);
    if (!from) return {};
    const check = (node) => {
      if (!node || node.type !== 'Literal' || typeof node.value !== 'string') return;
      const source = node.value;
      let to;
      if (source.startsWith('.')) {
        to = appOf(resolve(dirname(filename), source));
      } else {
        const pkg = source.split('/').slice(0, 2).join('/');
        to = APPS.find((app) => app.name === pkg)?.dir;
      }
      if (to && to !== from) context.report({ node, messageId: 'crossApp', data: { from, to, source } });
    };
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
    };
  },
};

export default { rules: { 'no-cross-app-imports': noCrossAppImports } };
