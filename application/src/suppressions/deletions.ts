import { randomUUID } from 'node:crypto';
import {
  suppressionDecider,
  type DomainErrorCode,
  type SuppressionCommand,
  type SuppressionEvent,
  type SuppressionState,
} from '@sendline/domain';
import { CommandHandler, type EventAppender, type SuppressionView } from '@sendline/infra';

export interface SuppressionDeletionsOptions {
  store: EventAppender;
  /** The view the deletions are applied to at once, so the caller reads its own write. */
  suppressions: Pick<SuppressionView, 'apply'>;
  now?: () => number;
  newId?: () => string;
}

/** What became of one address of a deletion request. */
export type SuppressionDeletion =
  /** Deleted (recorded whether or not the address was suppressed). */
  | { deleted: true }
  /** The entry named no address. */
  | { deleted: false; missingAddress: true }
  /** The suppression decider refused it (an invalid address): its code and words. */
  | { deleted: false; missingAddress: false; code: DomainErrorCode; reason: string };

/**
 * Addresses taken off an organization's suppressions (the API's suppressions delete, the console's remove, a bounce
 * reactivated): the suppression decider through the CommandHandler, applied to the suppression view as soon as its
 * events are appended (the projector's copy of them is a no-op).
 */
export class SuppressionDeletions {
  private readonly now: () => number;
  private readonly newId: () => string;
  private readonly commands: CommandHandler<SuppressionState, SuppressionCommand, SuppressionEvent>;

  constructor(options: SuppressionDeletionsOptions) {
    this.now = options.now ?? Date.now;
    this.newId = options.newId ?? randomUUID;
    this.commands = new CommandHandler({
      decider: suppressionDecider,
      store: options.store,
      apply: (events) => options.suppressions.apply(events),
    });
  }

  /**
   * Deletes each address on its own (undefined: an entry that named none), all in one append; one result per
   * address, in order. Deleted whether or not it was suppressed: the decider always records the deletion.
   */
  async delete(organizationId: string, addresses: readonly (string | undefined)[]): Promise<SuppressionDeletion[]> {
    const now = this.now();
    const events: SuppressionEvent[] = [];
    const results = addresses.map((emailAddress): SuppressionDeletion => {
      if (emailAddress === undefined) return { deleted: false, missingAddress: true };
      const decision = this.commands.decide({
        type: 'DeleteSuppression',
        data: { emailAddress },
        metadata: { organizationId, now, eventIds: [this.newId()] },
      });
      if (!decision.ok) {
        return { deleted: false, missingAddress: false, code: decision.error.code, reason: decision.error.message };
      }
      events.push(...decision.events);
      return { deleted: true };
    });
    await this.commands.commit(events);
    return results;
  }

  /** Deletes one address (a bounce reactivated); a broken rule throws its DomainError, nothing appended. */
  async deleteOne(organizationId: string, emailAddress: string): Promise<void> {
    await this.commands.handle({
      type: 'DeleteSuppression',
      data: { emailAddress },
      metadata: { organizationId, now: this.now(), eventIds: [this.newId()] },
    });
  }
}
