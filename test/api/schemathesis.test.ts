import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG = fileURLToPath(new URL('./schemathesis.toml', import.meta.url));

/**
 * Bounds of the run (docs/api.md, "The OpenAPI document"): test cases per operation and phase, and one seed so a run is
 * reproducible; SENDLINE_SCHEMATHESIS_EXAMPLES and SENDLINE_SCHEMATHESIS_SEED change them for a longer or another
 * search.
 */
const MAX_EXAMPLES = process.env.SENDLINE_SCHEMATHESIS_EXAMPLES ?? '75';
const SEED = process.env.SENDLINE_SCHEMATHESIS_SEED ?? '20261123';

let api: TestApi;
let org: TestOrganization;
beforeAll(async () => {
  api = await startTestApi();
  org = await createTestOrganization(api.deps);
  // Installs the pinned schemathesis when missing (npm test has done it before), outside the run's own time.
  const installed = await run(['--install']);
  expect(installed.code, installed.output).toBe(0);
}, 180_000);
afterAll(async () => {
  await api?.close();
});

function run(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['infra/local/bin/schemathesis', ...args], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', PYTHONUNBUFFERED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('the OpenAPI document against the API (schemathesis)', () => {
  it('finds nothing with every check, sending with a test key so nothing is queued', async () => {
    const origin = api.baseUrl.replace(/\/v1$/, '');
    const { code, output } = await run([
      '--config-file',
      CONFIG,
      '--no-color',
      'run',
      `${api.baseUrl}/openapi.json`,
      '--url',
      origin,
      '--header',
      `Authorization: Bearer ${org.testKey}`,
      '--checks',
      'all',
      '--max-examples',
      MAX_EXAMPLES,
      '--seed',
      SEED,
      '--request-timeout',
      '10',
      '--max-failures',
      '20',
    ]);
    // On a failure the whole output (every failing case with a curl line to reproduce it) is the assertion's message.
    // On success one line of figures: schemathesis's own summary imitates pytest's closing line ("== 2 warnings in
    // 17s =="), which a reader of this suite's log would take for the closing line of a run that executed no test.
    expect(code, output).toBe(0);
    const cases = /Test cases:\s*\n\s*(.+)/.exec(output)?.[1]?.trim() ?? 'no summary';
    const warnings = [...output.matchAll(/⚠️ (.+)/g)].map((m) => m[1]!.trim());
    console.log(
      `schemathesis cases: ${cases.replaceAll(',', ';')}${warnings.length ? `; warnings: ${warnings.join('; ')}` : ''}`,
    );
  }, 300_000);
});
