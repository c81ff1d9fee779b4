import type { DomainEvent } from '@sendline/domain';
import type { ScheduledData } from '@sendline/infra';

/**
 * A deferred delivery waiting for its next attempt: appended to email.delivery-retries (keyed by message
 * id) together with the MessageDeferred events of the attempt that failed. It carries everything the
 * next attempt needs, so the schedule survives a restart of the sender:
 * - which recipients are still to be tried (those deferred; the others were concluded by that attempt);
 * - how many attempts failed (`attempt`) and when the first was made (the retry window counts from it);
 * - the MessageAccepted event itself (its Kafka value), for the content.
 *
 * One record per message at a time: the next record is appended only by the attempt this one triggers. Its due
 * time and attempt are the envelope of every scheduled record (infra's ScheduledData): the event store's due-time
 * consumer holds it until `dueAt`.
 */
export interface DeliveryRetryScheduledData extends ScheduledData {
  messageId: string;
  recipients: string[];
  firstAttemptAt: number;
  /** The MessageAccepted event's Kafka value (Confluent Avro wire format), base64. */
  acceptedEvent: string;
}

export type DeliveryRetryScheduled = DomainEvent<'DeliveryRetryScheduled', DeliveryRetryScheduledData>;

export function isDeliveryRetryScheduled(event: { type: string }): event is DeliveryRetryScheduled {
  return event.type === 'DeliveryRetryScheduled';
}
