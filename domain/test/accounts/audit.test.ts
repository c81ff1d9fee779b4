import { describe, expect, it } from 'vitest';
import { auditSubject, organizationDecider, type AccountCommand, type AccountEvent } from '../../src/accounts';
import { commandMetadata } from './fixtures';

/** Events decided by the organization decider, for the audit's words. */
function decide(history: [AccountCommand['type'], AccountCommand['data']][]): AccountEvent[] {
  const events: AccountEvent[] = [];
  for (const [i, [type, data]] of history.entries()) {
    const state = events.reduce(organizationDecider.evolve, organizationDecider.initialState());
    const command = { type, data, metadata: { ...commandMetadata(), eventIds: [`e${i}a`, `e${i}b`], actor: 'ada' } };
    events.push(...organizationDecider.decide(command as AccountCommand, state));
  }
  return events;
}

describe('the audit', () => {
  it('given a history, when each event is described, then it says what changed and never a secret', () => {
    const events = decide([
      ['CreateOrganization', { name: 'Acme', adminEmail: 'ada@acme.example' }],
      ['AddMember', { email: 'bob@acme.example', role: 'developer' }],
      ['ChangeMemberRole', { email: 'bob@acme.example', role: 'viewer' }],
      [
        'IssueApiKey',
        {
          keyId: 'key-1',
          name: 'CI',
          scopes: ['email:send'],
          mode: 'live',
          keyHash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
          keyPrefix: 'sl_live_Ab12',
        },
      ],
      ['SetAllowance', { messagesPerMonth: 100 }],
    ]);
    expect(events.map(auditSubject)).toEqual([
      "organization 'Acme' (first admin ada@acme.example)",
      'member ada@acme.example as admin',
      'member bob@acme.example as developer',
      'member bob@acme.example: developer → viewer',
      "key 'CI' (sl_live_Ab12, live: email:send)",
      'allowance: 100 messages a month',
    ]);
    expect(events.map(auditSubject).join(' ')).not.toContain('e3b0c442');
  });

  it('given a command with an actor, then every event it decides records that actor', () => {
    const events = decide([['CreateOrganization', { name: 'Acme', adminEmail: 'ada@acme.example' }]]);
    expect(events.map((event) => event.metadata.actor)).toEqual(['ada', 'ada']);
  });
});
