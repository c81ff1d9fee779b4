import type { MessageState } from '@sendline/domain';
import { sqlString } from '../../clickhouse/client';
import type { ActivityQueries } from './query';
import { stateOfRow, type MessageRow } from './rows';

/** A message as the mail that comes back about it needs it: accepted, with its organization and recipients. */
export type ReturnedMessageState = Exclude<MessageState, { phase: 'Initial' }>;

/**
 * Where the messages that mail came back about stand, read from the activity store (the messages of the last 30
 * days, the store's retention): the organization, the active recipients in the order of MessageAccepted (a
 * return-path token names a recipient by that index) and each one's status. The returns reader decides on it.
 *
 * A view, so it may be behind the log by a moment: a report about a message the projector has not written yet is
 * not found (the reader tries it again later), and a recipient's status may be older than its last event. The
 * reader's event ids are derived from what they record, so a decision made twice on an older status appends the
 * same event again, which every reader takes for one.
 */
export class ReturnedMessages {
  constructor(private readonly queries: ActivityQueries) {}

  /** The state of each message found, by message id, in one query over the ids given. */
  async states(messageIds: readonly string[]): Promise<Map<string, ReturnedMessageState>> {
    const found = new Map<string, ReturnedMessageState>();
    const ids = [...new Set(messageIds)];
    if (ids.length === 0) return found;
    const rows = await this.queries.query<
      Pick<MessageRow, 'organization_id' | 'message_id' | 'phase' | 'recipients' | 'recipient_statuses'> &
        Partial<Pick<MessageRow, 'suppressed_recipients'>>
    >(
      'SELECT message_id, argMax(organization_id, version) AS organization_id, argMax(phase, version) AS phase, ' +
        'argMax(recipients, version) AS recipients, argMax(recipient_statuses, version) AS recipient_statuses, ' +
        'argMax(suppressed_recipients, version) AS suppressed_recipients ' +
        `FROM ${this.queries.db}.messages WHERE message_id IN (${ids.map(sqlString).join(', ')}) ` +
        'GROUP BY message_id',
      this.queries.deadline(),
    );
    for (const row of rows) {
      const state = stateOfRow({ suppressed_recipients: [], ...row } as MessageRow);
      if (state.phase !== 'Initial') found.set(row.message_id, state);
    }
    return found;
  }
}
