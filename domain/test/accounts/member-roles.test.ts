import { describe, expect, it } from 'vitest';
import { evolveOrganization, initialOrganizationState, organizationDecider } from '../../src/accounts';
import type { AccountEvent, ChangeMemberRole, MemberRoleChanged } from '../../src/accounts';
import { DeciderSpecification } from '../decider-spec';
import { ADMIN, CREATED_AT, LATER, anOrganization, command, eventMetadata, memberAdded } from './fixtures';

const { given } = DeciderSpecification.for(organizationDecider);

const changeRole = (email: string, role: string) => command<ChangeMemberRole>('ChangeMemberRole', { email, role });
const BOB = 'bob@acme.example';

describe('changing a member’s role', () => {
  it('given a developer, when an admin makes them a viewer, then MemberRoleChanged repeats the whole member', () => {
    given([...anOrganization(), memberAdded(BOB, 'developer', CREATED_AT)])
      .when(changeRole('Bob@Acme.Example', 'viewer'))
      .then([
        {
          type: 'MemberRoleChanged',
          data: { email: BOB, role: 'viewer', previousRole: 'developer', addedAt: CREATED_AT },
          metadata: eventMetadata('event-1', LATER),
        },
      ]);
  });

  it('given the last admin, when they are demoted, then it is refused', () => {
    given([...anOrganization(), memberAdded(BOB, 'developer')])
      .when(changeRole(ADMIN, 'developer'))
      .thenThrows('CannotRemoveLastAdmin', (error) => expect(error.details).toMatchObject({ email: ADMIN }));
  });

  it('given two admins, when one is demoted, then it is allowed', () => {
    given([...anOrganization(), memberAdded(BOB, 'admin')])
      .when(changeRole(ADMIN, 'viewer'))
      .then([
        {
          type: 'MemberRoleChanged',
          data: { email: ADMIN, role: 'viewer', previousRole: 'admin', addedAt: CREATED_AT },
          metadata: eventMetadata('event-1', LATER),
        },
      ]);
  });

  it('given a member with that role already, when it is given again, then nothing happens', () => {
    given([...anOrganization(), memberAdded(BOB, 'viewer')])
      .when(changeRole(BOB, 'viewer'))
      .thenNothingHappened();
  });

  it('refuses an unknown role and someone who is not a member', () => {
    given(anOrganization()).when(changeRole(ADMIN, 'owner')).thenThrows('InvalidRole');
    given(anOrganization()).when(changeRole('eve@acme.example', 'viewer')).thenThrows('MemberNotFound');
  });

  it('evolves the member to the new role, keeping when they were added', () => {
    const changed: MemberRoleChanged = {
      type: 'MemberRoleChanged',
      data: { email: BOB, role: 'admin', previousRole: 'viewer', addedAt: CREATED_AT },
      metadata: eventMetadata('e', LATER),
    };
    const events: AccountEvent[] = [...anOrganization(), memberAdded(BOB, 'viewer'), changed];
    const state = events.reduce(evolveOrganization, initialOrganizationState());
    expect(state.members.get(BOB)).toEqual({ role: 'admin', addedAt: CREATED_AT });
  });
});
