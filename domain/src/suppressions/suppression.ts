import type { DomainEvent } from '../event';

/**
 * The suppression aggregate: one stream per (organization, lowercased address), on a compacted topic
 * kept forever, so that a hard bounce (or a spam complaint) older than the 30-day message retention still suppresses.
 *
 *   NotSuppressed ──SuppressionAdded──► Suppressed ──SuppressionDeleted──► NotSuppressed
 */

export type SuppressionReason = 'HardBounce' | 'SpamComplaint' | 'ManualSuppression';
export type SuppressionOrigin = 'Recipient' | 'Customer' | 'Admin';

export const SUPPRESSION_REASONS: readonly SuppressionReason[] = ['HardBounce', 'SpamComplaint', 'ManualSuppression'];
export const SUPPRESSION_ORIGINS: readonly SuppressionOrigin[] = ['Recipient', 'Customer', 'Admin'];

/**
 * Which origins may give which reason: a hard bounce comes from the recipient's server, a spam complaint from the
 * recipient (through their provider's feedback loop), a manual one from a person.
 */
export const ALLOWED_ORIGINS: Readonly<Record<SuppressionReason, readonly SuppressionOrigin[]>> = {
  HardBounce: ['Recipient'],
  SpamComplaint: ['Recipient'],
  ManualSuppression: ['Customer', 'Admin'],
};

export interface SuppressionAddedData {
  /** Lowercase. */
  emailAddress: string;
  reason: SuppressionReason;
  origin: SuppressionOrigin;
  /** Epoch milliseconds. */
  createdAt: number;
}

export interface SuppressionDeletedData {
  /** Lowercase. */
  emailAddress: string;
}

export type SuppressionAdded = DomainEvent<'SuppressionAdded', SuppressionAddedData>;
export type SuppressionDeleted = DomainEvent<'SuppressionDeleted', SuppressionDeletedData>;
export type SuppressionEvent = SuppressionAdded | SuppressionDeleted;

export const SUPPRESSION_EVENT_TYPES = [
  'SuppressionAdded',
  'SuppressionDeleted',
] as const satisfies readonly SuppressionEvent['type'][];

export type SuppressionState =
  | { status: 'NotSuppressed' }
  | {
      status: 'Suppressed';
      emailAddress: string;
      reason: SuppressionReason;
      origin: SuppressionOrigin;
      createdAt: number;
    };

export function initialSuppressionState(): SuppressionState {
  return { status: 'NotSuppressed' };
}

export function evolveSuppression(state: SuppressionState, event: SuppressionEvent): SuppressionState {
  switch (event.type) {
    case 'SuppressionAdded':
      // The first addition is kept: a later one (a replayed duplicate) changes nothing.
      return state.status === 'Suppressed' ? state : { status: 'Suppressed', ...event.data };
    case 'SuppressionDeleted':
      return { status: 'NotSuppressed' };
    default: {
      const _unknown: never = event;
      return state;
    }
  }
}

/**
 * The stream (and Kafka message) key of a suppression: `<organizationId>:<lowercased address>`.
 * Organization ids hold no ':', so the first ':' separates the two.
 */
export function suppressionKey(organizationId: string, emailAddress: string): string {
  return `${organizationId}:${emailAddress.trim().toLowerCase()}`;
}
