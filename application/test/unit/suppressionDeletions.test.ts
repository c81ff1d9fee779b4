import type { StoredEvent } from '@sendline/infra';
import { describe, expect, it } from 'vitest';
import { SuppressionDeletions } from '../../src';

const NOW = Date.UTC(2026, 10, 28, 12);

describe('suppression deletions', () => {
  it('deletes each address on its own, in one append, and says which entries named no address', async () => {
    const steps: string[] = [];
    const deletions = new SuppressionDeletions({
      store: { append: async (events: StoredEvent[]) => void steps.push(`append ${events.length}`) },
      suppressions: { apply: async (events) => void steps.push(`apply ${events.length}`) },
      now: () => NOW,
      newId: () => 'e-1',
    });
    const results = await deletions.delete('org-1', ['bob@example.com', undefined, 'not an address']);
    expect(results).toEqual([
      { deleted: true },
      { deleted: false, missingAddress: true },
      { deleted: false, missingAddress: false, code: 'InvalidEmailAddress', reason: expect.any(String) },
    ]);
    expect(steps).toEqual(['append 1', 'apply 1']);
  });
});
