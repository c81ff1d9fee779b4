import { idSupply, type CommandMetadata, type EventMetadata } from './event';

/**
 * An aggregate's rules in Emmett's decider shape: `decide` turns a command and the current state into the
 * events that record what happened (or throws a DomainError naming the rule it broke); `evolve` folds one
 * event into the state; `initialState` is the state before any event. Pure: time and ids come in the
 * command's metadata. infra's CommandHandler runs any decider against the event store.
 */
export interface Decider<State, Command, Event> {
  initialState(): State;
  decide(command: Command, state: State): Event[];
  evolve(state: State, event: Event): State;
}

/** The version of the Avro schemas every event is written with today (schemas/). */
export const EVENT_SCHEMA_VERSION = 1;

/**
 * The metadata of the events one command decides: each call takes the next of the command's event ids (in the
 * order the caller gave them), with the command's organization and time.
 */
export function eventMetadata(metadata: CommandMetadata): () => EventMetadata {
  const nextId = idSupply(metadata);
  return () => ({
    eventId: nextId(),
    organizationId: metadata.organizationId,
    occurredAt: metadata.now,
    schemaVersion: EVENT_SCHEMA_VERSION,
    ...(metadata.actor !== undefined ? { actor: metadata.actor } : {}),
  });
}

/** The state after a stream of events, from the decider's initial state. */
export function fold<State, Event>(decider: Decider<State, unknown, Event>, events: readonly Event[]): State {
  return events.reduce((state, event) => decider.evolve(state, event), decider.initialState());
}
