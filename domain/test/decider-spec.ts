import { expect } from 'vitest';
import { DomainError } from '../src/domainError';

/**
 * Given / when / then for deciders, after Emmett's DeciderSpecification:
 *
 *   DeciderSpecification.for(decider).given(events).when(command).then(events)
 *   DeciderSpecification.for(decider).given(events).when(command).thenNothingHappened()
 *   DeciderSpecification.for(decider).given(events).when(command).thenThrows('Code', (error) => ...)
 *
 * `given` events are folded with `evolve` from `initialState()`; `when` runs `decide` on the result.
 */
export interface Decider<State, Command, Event> {
  initialState(): State;
  decide(command: Command, state: State): Event[];
  evolve(state: State, event: Event): State;
}

export interface ThenStep<Event> {
  /** The decided events equal these (deep equality). */
  then(expected: Event[]): void;
  /** The command was accepted and decided no event. */
  thenNothingHappened(): void;
  /** The command was refused with a DomainError of this code; `check` may look further into it. */
  thenThrows(code: string, check?: (error: DomainError) => void): void;
}

export const DeciderSpecification = {
  for<State, Command, Event>(decider: Decider<State, Command, Event>) {
    return {
      given(events: Event[]) {
        return {
          when(command: Command): ThenStep<Event> {
            const run = () =>
              decider.decide(
                command,
                events.reduce((state, event) => decider.evolve(state, event), decider.initialState()),
              );
            return {
              then(expected) {
                expect(run()).toEqual(expected);
              },
              thenNothingHappened() {
                expect(run()).toEqual([]);
              },
              thenThrows(code, check) {
                let thrown: unknown;
                try {
                  run();
                } catch (error) {
                  thrown = error;
                }
                expect(thrown, `expected DomainError ${code}, but the command was decided`).toBeInstanceOf(DomainError);
                const error = thrown as DomainError;
                expect(error.code).toBe(code);
                check?.(error);
              },
            };
          },
        };
      },
    };
  },
};
