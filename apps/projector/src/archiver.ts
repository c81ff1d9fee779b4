import {
  describeCause,
  InfrastructureError,
  topicConfigs,
  type EventStore,
  type OutgoingMessage,
  type RunningConsumer,
} from '@sendline/infra';
import type { Logger } from 'pino';
import type { ProjectorMetrics } from './metrics';

export interface ArchiverOptions {
  store: EventStore;
  groupId: string;
  logger?: Logger;
  metrics?: ProjectorMetrics;
  sessionTimeoutMs?: number;
}

/** The archiver's label in the projector's metrics (events, failures, lag). */
export const ARCHIVER = 'accounts-archiver' as const;

/**
 * The accounts archiver: copies every event of the compacted `accounts` topic, unchanged (value and headers), to
 * the never-compacted `accounts.history` topic, keyed by organization (one organization's history in one
 * partition), where the audit view is projected from. Compaction of `accounts` waits a day
 * (`min.compaction.lag.ms`), so an event is copied long before it can be compacted away.
 *
 * At least once: a batch's offsets are committed only after the copies were acknowledged by every in-sync replica
 * (the event store's append); a batch copied again after a crash is a duplicate the audit takes for one entry
 * (entries are the event's id and content). An event is never dead-lettered for a failed copy: the partition
 * waits (its lag shows it) until the history topic takes it, because a dead-lettered copy is a hole in the audit.
 */
export async function startAccountsArchiver(options: ArchiverOptions): Promise<RunningConsumer> {
  const { store, logger, metrics } = options;
  // The history topic may be newer than the services' provisioning: create it if missing, as provisioning would.
  await store.ensureTopics(topicConfigs(store.topics).filter((topic) => topic.topic === store.topics.accountsHistory));
  return store.consume({
    groupId: options.groupId,
    topics: [store.topics.accounts],
    partitionsConsumedConcurrently: 3,
    // Every failure is tried again, for as long as it takes (see above); 30 s apart at most.
    maxAttempts: Number.POSITIVE_INFINITY,
    maxRetryDelayMs: 30_000,
    retryUnknownErrors: true,
    ...(options.sessionTimeoutMs ? { sessionTimeoutMs: options.sessionTimeoutMs } : {}),
    handleBatch: async (items) => {
      const copies: OutgoingMessage[] = [];
      for (const { event, message } of items) {
        if (!message.value) continue;
        copies.push({
          topic: store.topics.accountsHistory,
          key: event.metadata.organizationId,
          value: message.value,
          headers: message.headers ?? {},
        });
      }
      try {
        await store.appendRecords(copies);
      } catch (cause) {
        // An append that timed out may have landed; copying it again is harmless, so every failure is retriable.
        throw new InfrastructureError(
          'ArchiveFailed',
          `copying to the account history failed: ${describeCause(cause)}`,
          {
            retriable: true,
            cause,
          },
        );
      }
      metrics?.events.inc({ projection: ARCHIVER }, copies.length);
    },
    onError: (error, item) => {
      metrics?.failures.inc({ projection: ARCHIVER });
      logger?.warn(
        { err: error, position: item?.position },
        'copying account events to their history failed; retrying',
      );
    },
  });
}
