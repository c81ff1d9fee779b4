import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WEBHOOKS_NODE_FLAGS } from '../../src/config';

describe("the webhooks process's V8 flags", () => {
  it('are the ones npm start runs it with', () => {
    // The start script is bash: it names the flags itself, and must keep naming these.
    const start = readFileSync(join(import.meta.dirname, '../../../../infra/local/bin/start'), 'utf8');
    const line = start.split('\n').find((candidate) => candidate.startsWith('start_app webhooks '));
    expect(line).toBeDefined();
    for (const flag of WEBHOOKS_NODE_FLAGS) expect(line).toContain(flag);
  });
});
