import type { Consumer } from 'kafkajs';
import type { EventStore } from '@sendline/infra';
import { isDeliveryRetryScheduled, type DeliveryRetryScheduled } from './retryRecord';

/**
 * The consumer of the retry schedule (email.delivery-retries): the event store's due-time consumer
 * (`store.consumeScheduled`, infra/src/kafka/eventStore/scheduled.ts), settling each record in its batch. It holds
 * each record until it is due, then hands it to `handle`, and commits a record's offset only after `handle`
 * returned (the retry's outcome appended).
 *
 * In one fetched batch, every record already due is handled (records of one message in order, others
 * side by side); the offset is committed up to the first record not yet done; if some records wait,
 * the partition is paused until the earliest of them is due and fetched again from there. Records
 * handled out of order (due, behind one that waits) are fetched again too and skipped: the sender's
 * ledger says their attempt was made. So a record waits behind a later-due one only beyond one fetch
 * (up to 20 MB of records per partition).
 *
 * `handle` failing with a retriable error: the record stays, the partition is retried after a pause
 * (growing to a minute). With any other error: the record goes to the topic's dead-letter topic (the
 * error in its headers) and the partition moves on — an unknown failure is never retried blindly.
 */

export interface RetryConsumerOptions {
  store: EventStore;
  groupId: string;
  topic: string;
  handle: (record: DeliveryRetryScheduled) => Promise<void>;
  /** Records this consumer is for (by organization); the others are passed over. Default: all. */
  accept?: (record: DeliveryRetryScheduled) => boolean;
  startNewGroupAt: 'earliest' | 'latest';
  sessionTimeoutMs: number;
  now?: () => number;
  onError?: (error: unknown, record: DeliveryRetryScheduled | undefined) => void;
}

export interface RunningRetryConsumer {
  consumer: Consumer;
  stop(): Promise<void>;
}

export function startRetryConsumer(options: RetryConsumerOptions): Promise<RunningRetryConsumer> {
  return options.store.consumeScheduled<DeliveryRetryScheduled>({
    settle: 'in-batch',
    groupId: options.groupId,
    topics: [options.topic],
    isRecord: isDeliveryRetryScheduled,
    keyOf: (record) => record.data.messageId,
    handle: options.handle,
    ...(options.accept && { accept: options.accept }),
    startNewGroupAt: options.startNewGroupAt,
    sessionTimeoutMs: options.sessionTimeoutMs,
    // A paused partition is resumed by a timer; a short fetch wait picks it up soon after.
    maxWaitTimeInMs: 500,
    ...(options.now && { now: options.now }),
    ...(options.onError && { onError: options.onError }),
  });
}
