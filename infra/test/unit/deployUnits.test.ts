import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { COMPILED_APPS } from '../../local/src/build';

/**
 * The systemd units of infra/deploy (docs/operations.md): one per long-running app, each checked by
 * `systemd-analyze verify`. That command exits 0 on a unit it ignores lines of (an unknown key, a bad value), so
 * the check is that it prints nothing. It is run on a copy whose install folder (/opt/sendline) is a scratch
 * folder holding each unit's apps/<app>/dist/main.js and whose node is this one, so that what it checks on this
 * machine (the command is executable) holds, and the script each unit runs is the compiled app of its name.
 */

const DEPLOY = fileURLToPath(new URL('../../deploy', import.meta.url));
const INSTALLED = '/opt/sendline';
const scratch = mkdtempSync(join(tmpdir(), 'sendline-units-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const units = readdirSync(DEPLOY).filter((file) => /\.(service|target)$/.test(file));
const services = units.filter((file) => file.endsWith('.service'));
const LONG_RUNNING = COMPILED_APPS.filter((app) => app !== 'admin');

/** Copies the units into a folder of their own, the install folder and node made to exist; answers the folder. */
function installedCopy(name: string, edit: (unit: string, file: string) => string = (unit) => unit): string {
  const root = join(scratch, name);
  const unitsDir = join(root, 'units');
  mkdirSync(unitsDir, { recursive: true });
  for (const app of LONG_RUNNING) {
    mkdirSync(join(root, 'opt', 'apps', app, 'dist'), { recursive: true });
    writeFileSync(join(root, 'opt', 'apps', app, 'dist', 'main.js'), '');
  }
  for (const file of units) {
    const text = readFileSync(join(DEPLOY, file), 'utf8')
      .replaceAll('/usr/bin/node ', `${process.execPath} `)
      .replaceAll(INSTALLED, join(root, 'opt'));
    writeFileSync(join(unitsDir, file), edit(text, file));
  }
  return unitsDir;
}

function verify(unitsDir: string): { status: number | null; output: string } {
  const result = spawnSync('systemd-analyze', ['verify', ...units.map((file) => join(unitsDir, file))], {
    encoding: 'utf8',
  });
  if (result.error) throw result.error;
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}

const settings = (file: string, key: string) =>
  readFileSync(join(DEPLOY, file), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith(`${key}=`))
    .map((line) => line.slice(key.length + 1));

describe('infra/deploy: the systemd units', () => {
  it('has a unit for every long-running app, and a target that starts them all', () => {
    expect(services.sort()).toEqual(LONG_RUNNING.map((app) => `sendline-${app}.service`).sort());
    const wanted = settings('sendline.target', 'Wants').flatMap((line) => line.split(/\s+/));
    expect(wanted.sort()).toEqual(services.sort());
  });

  it('starts each app compiled, with node alone, restarts it on failure and reads the environment file', () => {
    for (const app of LONG_RUNNING) {
      const file = `sendline-${app}.service`;
      const [execStart, ...more] = settings(file, 'ExecStart');
      expect(more).toEqual([]);
      const args = execStart!.split(/\s+/);
      expect(args[0]).toBe('/usr/bin/node');
      expect(args.at(-1)).toBe(`${INSTALLED}/apps/${app}/dist/main.js`);
      expect(args.join(' ')).not.toMatch(/tsx|\.ts\b|--import|--loader/);
      expect(settings(file, 'Restart')).toEqual(['on-failure']);
      expect(settings(file, 'EnvironmentFile')).toContain('/etc/sendline/sendline.env');
      expect(settings(file, 'WantedBy')).toEqual(['sendline.target']);
      expect(settings(file, 'MemoryMax')).toHaveLength(1);
      expect(settings(file, 'LimitNOFILE')).toHaveLength(1);
    }
  });

  it('passes systemd-analyze verify without a word', () => {
    const copy = installedCopy('as-written');
    for (const app of LONG_RUNNING)
      expect(existsSync(join(copy, '..', 'opt', 'apps', app, 'dist', 'main.js'))).toBe(true);
    expect(verify(copy)).toEqual({ status: 0, output: '' });
  });

  it('is checked for real: a malformed unit is reported', () => {
    const misspelt = verify(
      installedCopy('misspelt', (unit, file) =>
        file === 'sendline-sender.service' ? unit.replace('Restart=on-failure', 'Restart=sometimes') : unit,
      ),
    );
    expect(misspelt.output).toMatch(/sendline-sender\.service.*restart/i);
    const unknownKey = verify(
      installedCopy('unknown-key', (unit, file) =>
        file === 'sendline-api.service' ? unit.replace('[Service]', '[Service]\nMemoryMaximum=1G') : unit,
      ),
    );
    expect(unknownKey.output).toMatch(/sendline-api\.service.*Unknown key/);
  });
});
