import type { Decider } from '../decider';
import { decideOrganization } from './commands';
import type { AccountCommand } from './commands';
import { evolveOrganization, initialOrganizationState } from './organization';
import type { AccountEvent, OrganizationState } from './organization';

/** The organization aggregate as an Emmett-style decider. */
export const organizationDecider: Decider<OrganizationState, AccountCommand, AccountEvent> = {
  initialState: initialOrganizationState,
  decide: decideOrganization,
  evolve: evolveOrganization,
};

/** The state after a stream of account events (all of one organization). */
export function foldOrganization(events: readonly AccountEvent[]): OrganizationState {
  return events.reduce(evolveOrganization, initialOrganizationState());
}
