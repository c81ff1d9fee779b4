import { eventMetadata, type Decider } from '../decider';
import { DomainError } from '../domainError';
import { assertNever, type Command } from '../event';
import type { MessageHardBounced, MessageSpamComplaint } from '../messages';
import { parseEmailAddress } from '../validation';
import {
  ALLOWED_ORIGINS,
  evolveSuppression,
  initialSuppressionState,
  SUPPRESSION_ORIGINS,
  SUPPRESSION_REASONS,
  type SuppressionAdded,
  type SuppressionDeleted,
  type SuppressionEvent,
  type SuppressionOrigin,
  type SuppressionReason,
  type SuppressionState,
} from './suppression';

/**
 * The suppression aggregate's commands and `decide`. Domain errors (codes):
 * - InvalidEmailAddress: the address is not one bare, valid address.
 * - InvalidSuppressionOrigin: the reason and origin do not go together (HardBounce and SpamComplaint need Recipient;
 *   ManualSuppression needs Customer or Admin), or either is unknown.
 *
 * Adding an address already suppressed decides nothing ([]): the first entry, with its createdAt, stays.
 * Deleting always decides SuppressionDeleted, suppressed or not: the API answers Deleted either way, and
 * every view of the compacted topic converges on "not suppressed".
 */

export interface AddSuppressionData {
  emailAddress: string;
  reason: SuppressionReason;
  origin: SuppressionOrigin;
}

export interface DeleteSuppressionData {
  emailAddress: string;
}

export type AddSuppression = Command<'AddSuppression', AddSuppressionData>;
export type DeleteSuppression = Command<'DeleteSuppression', DeleteSuppressionData>;
export type SuppressionCommand = AddSuppression | DeleteSuppression;

function canonical(emailAddress: string): string {
  const parsed = parseEmailAddress(emailAddress);
  if (!parsed.ok) throw new DomainError('InvalidEmailAddress', parsed.reason, { emailAddress });
  return parsed.value;
}

function addSuppression(command: AddSuppression, state: SuppressionState): SuppressionAdded[] {
  const { reason, origin } = command.data;
  if (!SUPPRESSION_REASONS.includes(reason) || !SUPPRESSION_ORIGINS.includes(origin)) {
    throw new DomainError('InvalidSuppressionOrigin', `unknown suppression reason ${reason} or origin ${origin}`, {
      reason,
      origin,
    });
  }
  if (!ALLOWED_ORIGINS[reason].includes(origin)) {
    throw new DomainError(
      'InvalidSuppressionOrigin',
      `a ${reason} suppression comes from ${ALLOWED_ORIGINS[reason].join(' or ')}, not ${origin}`,
      { reason, origin },
    );
  }
  const emailAddress = canonical(command.data.emailAddress);
  if (state.status === 'Suppressed') return [];
  return [
    {
      type: 'SuppressionAdded',
      data: { emailAddress, reason, origin, createdAt: command.metadata.now },
      metadata: eventMetadata(command.metadata)(),
    },
  ];
}

function deleteSuppression(command: DeleteSuppression): SuppressionDeleted[] {
  const emailAddress = canonical(command.data.emailAddress);
  return [{ type: 'SuppressionDeleted', data: { emailAddress }, metadata: eventMetadata(command.metadata)() }];
}

export function decideSuppression(command: SuppressionCommand, state: SuppressionState): SuppressionEvent[] {
  switch (command.type) {
    case 'AddSuppression':
      return addSuppression(command, state);
    case 'DeleteSuppression':
      return deleteSuppression(command);
    default:
      return assertNever(command);
  }
}

export type SuppressionDecider = Decider<SuppressionState, SuppressionCommand, SuppressionEvent>;

export const suppressionDecider: SuppressionDecider = {
  initialState: initialSuppressionState,
  decide: decideSuppression,
  evolve: evolveSuppression,
};

/** A hard bounce suppresses its recipient: the AddSuppression that follows a MessageHardBounced. */
export function suppressionForHardBounce(event: MessageHardBounced): AddSuppressionData {
  return { emailAddress: event.data.recipient, reason: 'HardBounce', origin: 'Recipient' };
}

/** A spam complaint suppresses its recipient (Postmark's SpamComplaint reason). */
export function suppressionForSpamComplaint(event: MessageSpamComplaint): AddSuppressionData {
  return { emailAddress: event.data.recipient, reason: 'SpamComplaint', origin: 'Recipient' };
}
