import { DomainError, type Decider } from '@sendline/domain';
import type { StoredEvent } from '../kafka/eventStore';

/** Where decided events go: the event store's append (acknowledged by every in-sync replica). */
export interface EventAppender {
  append(events: StoredEvent[]): Promise<void>;
}

/** A command decided: its events (none when it changed nothing), or the rule it broke. */
export type Decision<Event> = { ok: true; events: Event[] } | { ok: false; error: DomainError };

export interface CommandHandlerOptions<State, Command, Event extends StoredEvent> {
  decider: Decider<State, Command, Event>;
  store: EventAppender;
  /**
   * Applies appended events to the caller's view at once, so the caller reads its own write (a revoked key is
   * refused from that moment). The projector applying the same events later changes nothing: views apply
   * idempotently. Optional: without it the projector alone brings the view up to date.
   */
  apply?: (events: Event[]) => Promise<void>;
}

/**
 * The one way a command becomes history: decide on the state (read by the caller from a view, or the decider's
 * initial state) → append the events to Kafka → apply them to the view. Every writer — the API's sends and
 * suppressions, the console's account commands, the sender's outcomes — runs its decider through this.
 *
 * `handle` is the whole path for one command. A caller with a step between deciding and appending (the send
 * path reserves the allowance for the messages it decided; the sender appends a batch's outcomes together)
 * uses its two halves: `decide` for each command, then one `commit` of the events it keeps.
 */
export class CommandHandler<State, Command, Event extends StoredEvent> {
  constructor(private readonly options: CommandHandlerOptions<State, Command, Event>) {}

  /** Decides one command on `state`; a broken rule comes back as the DomainError, anything else throws. */
  decide(command: Command, state: State = this.options.decider.initialState()): Decision<Event> {
    try {
      return { ok: true, events: this.options.decider.decide(command, state) };
    } catch (error) {
      if (error instanceof DomainError) return { ok: false, error };
      throw error;
    }
  }

  /** Appends the events (one append, whatever their topics) and then applies them to the view. */
  async commit(events: Event[]): Promise<void> {
    if (events.length === 0) return;
    await this.options.store.append(events);
    await this.options.apply?.(events);
  }

  /** decide → append → apply. Throws the DomainError of a broken rule (nothing appended); returns the events. */
  async handle(command: Command, state?: State): Promise<Event[]> {
    const decision = this.decide(command, state);
    if (!decision.ok) throw decision.error;
    await this.commit(decision.events);
    return decision.events;
  }
}
