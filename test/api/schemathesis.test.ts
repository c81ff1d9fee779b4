import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG = fileURLToPath(new URL('./schemathesis.toml', import.meta.url));

/**
 * Bounds of the run (README, "The OpenAPI document"): test cases per operation and phase, and one seed so a run is
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
    // Its summary (and, on a failure, every failing case with a curl line to reproduce it) in the test's output.
    const summary = output.includes('FAILURES') ? output.slice(output.indexOf('FAILURES') - 40) : output;
    console.log(summary.slice(summary.indexOf('=====') >= 0 ? summary.indexOf('=====') : 0));
    expect(code, output).toBe(0);
  }, 180_000);
});
