import { suppressionDecider, type SuppressionCommand, type SuppressionEvent } from '@sendline/domain';
import { describe, expect, it } from 'vitest';
import { CommandHandler, type StoredEvent } from '../../src';

const ORG = 'org-1';
const add = (emailAddress: string, eventId = 'e-1'): SuppressionCommand => ({
  type: 'AddSuppression',
  data: { emailAddress, reason: 'ManualSuppression', origin: 'Customer' },
  metadata: { organizationId: ORG, now: Date.UTC(2026, 10, 23), eventIds: [eventId] },
});

/** An event store and a view that record what reached them, in order. */
function recorder(failAppend = false) {
  const steps: string[] = [];
  const handler = new CommandHandler({
    decider: suppressionDecider,
    store: {
      append: async (events: StoredEvent[]) => {
        if (failAppend) throw new Error('Kafka did not acknowledge');
        steps.push(`append ${events.map((e) => e.type).join(',')}`);
      },
    },
    apply: async (events: SuppressionEvent[]) => {
      steps.push(`apply ${events.map((e) => e.type).join(',')}`);
    },
  });
  return { handler, steps };
}

describe('the command handler', () => {
  it('given no state, when a suppression is added, then its event is appended before it is applied to the view', async () => {
    const { handler, steps } = recorder();
    const events = await handler.handle(add('Ann@Example.com'));
    expect(events).toMatchObject([{ type: 'SuppressionAdded', data: { emailAddress: 'ann@example.com' } }]);
    expect(steps).toEqual(['append SuppressionAdded', 'apply SuppressionAdded']);
  });

  it('when the command breaks a rule, then nothing is appended or applied and the domain error says which', async () => {
    const { handler, steps } = recorder();
    await expect(handler.handle(add('not an address'))).rejects.toMatchObject({ code: 'InvalidEmailAddress' });
    expect(handler.decide(add('not an address'))).toMatchObject({ ok: false, error: { code: 'InvalidEmailAddress' } });
    expect(steps).toEqual([]);
  });

  it('given the address is suppressed already, when it is added again, then nothing is appended', async () => {
    const { handler, steps } = recorder();
    const [added] = await handler.handle(add('ann@example.com'));
    steps.length = 0;
    const state = suppressionDecider.evolve(suppressionDecider.initialState(), added!);
    expect(await handler.handle(add('ann@example.com', 'e-2'), state)).toEqual([]);
    expect(steps).toEqual([]);
  });

  it('when the append fails, then the view is not touched and the error reaches the caller', async () => {
    const { handler, steps } = recorder(true);
    await expect(handler.handle(add('ann@example.com'))).rejects.toThrow('Kafka did not acknowledge');
    expect(steps).toEqual([]);
  });
});
