import { DomainError } from './domainError';

/**
 * The envelope every event and command shares (Emmett's `{ type, data, metadata }`).
 *
 * Time and ids never come from inside the domain: the caller (an app) passes
 * `now` and fresh ids in the command's metadata, and the decider copies them
 * into the events it decides.
 */
export interface EventMetadata {
  /** Unique id of this event (UUID). */
  eventId: string;
  /** The organization the event belongs to: every event is scoped to one. */
  organizationId: string;
  /** When it happened, epoch milliseconds (UTC). */
  occurredAt: number;
  /** Version of the event's Avro schema that wrote it. */
  schemaVersion: number;
  /**
   * Who made the change, when the caller said (account events: a console member's address, 'admin command line',
   * 'api key <prefix>', 'system'); the audit shows it. Absent on events that do not record it.
   */
  actor?: string;
}

export interface DomainEvent<Type extends string, Data> {
  type: Type;
  data: Data;
  metadata: EventMetadata;
}

export interface CommandMetadata {
  organizationId: string;
  /** The caller's clock, epoch milliseconds. */
  now: number;
  /** Fresh event ids handed in by the caller, used in order; the decider never invents ids. */
  eventIds: string[];
  /** Who asks (see EventMetadata.actor); copied into every event decided. */
  actor?: string;
}

export interface Command<Type extends string, Data> {
  type: Type;
  data: Data;
  metadata: CommandMetadata;
}

/** Takes the next id from a command's metadata, or fails loudly when the caller gave too few. */
export function idSupply(metadata: CommandMetadata): () => string {
  let next = 0;
  return () => {
    const id = metadata.eventIds[next++];
    if (id === undefined) {
      throw new DomainError(
        'MissingEventId',
        `the command carried ${metadata.eventIds.length} event ids, more were needed`,
      );
    }
    return id;
  };
}

export function assertNever(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
