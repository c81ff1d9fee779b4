import type { Consumer } from 'kafkajs';
import { isWebhookCallScheduled, type WebhookCallScheduled } from '@sendline/domain';
import { webhookCallCommands, webhookCallTopicConfig, webhookRetryTopic, type EventStore } from '@sendline/infra';
import { decided, setAsideOf } from './commands';
import { EndpointPool } from './pool';

/**
 * The consumer of the call topics (webhooks.calls and webhooks.calls.retry-<n>): the event store's due-time consumer
 * (`store.consumeScheduled`, infra/src/kafka/eventStore/scheduled.ts), handing each due call off to the endpoint
 * pool and going on fetching without waiting for it, so a slow endpoint never holds the partition.
 *
 * At least once: a record's offset is committed only once its attempt settled (answered, or its next attempt
 * appended, or given up) — and the records before it in its partition too: every second, each partition commits
 * up to its first record still in hand. A crash makes the records after that point again (the calls already
 * answered are skipped by their `answered` mark; the others go out again with the same Webhook-Id).
 *
 * Waiting: the records of one retry topic all wait the same delay, so they come due in the order they were
 * appended. At the first record not yet due the partition is paused until it is, and fetched again from there.
 *
 * A webhook backed up (`queueLimit` calls waiting already that would take more than a few seconds to go out at its
 * pace: a slow or dead endpoint, pool.ts): its next calls are set aside on retry-1, attempt unchanged, instead of
 * filling the memory and holding back the commits of everyone else's calls. The calls of a fetched batch set aside
 * leave in one append (a round trip for all of them, not one each).
 */
export interface CallerOptions {
  store: EventStore;
  groupId: string;
  /** How many retry topics there are (the retry schedule's length). */
  retries: number;
  /** The first retry's delay: how long a call set aside waits. */
  setAsideDelayMs: number;
  /**
   * `answered`: whether `answered` (below) found the call answered already; undefined when not asked. `called`:
   * to be called once the HTTP call is over, which frees the endpoint's slot while the attempt is recorded.
   */
  perform: (record: WebhookCallScheduled, answered: boolean | undefined, called: () => void) => Promise<unknown>;
  /** The calls of a fetched batch already answered, read at once (one round trip per batch, not per call). */
  answered?: (records: readonly WebhookCallScheduled[]) => Promise<Set<string>>;
  /** Calls this caller is for (by organization); the others are passed over. Default: all. */
  accept?: (record: WebhookCallScheduled) => boolean;
  startNewGroupAt: 'earliest' | 'latest';
  sessionTimeoutMs: number;
  perEndpointConcurrency: number;
  maxInFlight: number;
  perEndpointQueue: number;
  partitions?: number;
  now?: () => number;
  onError?: (error: unknown, record: WebhookCallScheduled | undefined) => void;
}

export interface RunningCaller {
  consumer: Consumer;
  pool: EndpointPool;
  stop(): Promise<void>;
}

/** The longest an attempt that threw waits before it is tried again. */
const MAX_HOLD_MS = 60_000;

export async function startCaller(options: CallerOptions): Promise<RunningCaller> {
  const { store } = options;
  const now = options.now ?? Date.now;
  const calls = store.topics.webhookCalls;
  /** The calls set aside: decided by the domain, appended through the CommandHandler. */
  const callRecords = webhookCallCommands(store);
  const topics = [calls, ...Array.from({ length: options.retries }, (_, i) => webhookRetryTopic(store.topics, i + 1))];

  const pool = new EndpointPool(options.perEndpointConcurrency, options.maxInFlight, options.perEndpointQueue);
  let stopped = false;
  /** The attempts waiting to be tried again (after a throw); none fires after stop. */
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopped) fn();
    }, ms);
    timers.add(timer);
  };

  /**
   * Attempts past their HTTP call, being recorded: out of their endpoint's slot (the slot is for calls to the
   * endpoint, not for our round trips), still in hand until settled; at most `maxInFlight` at once.
   */
  let recording = 0;
  const recorded: (() => void)[] = [];
  const busy = () => pool.busy() || recording >= options.maxInFlight;

  /** Runs an attempt in its endpoint's turn; an attempt that throws (Kafka or Redis away) is tried again later. */
  const run = (record: WebhookCallScheduled, answered: boolean | undefined, settle: () => void, failures = 0) => {
    const endpoint = `${record.metadata.organizationId}/${record.data.webhookId}`;
    pool.submit(
      endpoint,
      () =>
        new Promise<void>((freeSlot) => {
          let called = false;
          const afterCall = () => {
            if (called) return;
            called = true;
            recording++;
            freeSlot();
          };
          const done = () => {
            if (called) {
              recording--;
              for (const wake of recorded.splice(0)) wake();
            }
            freeSlot();
          };
          // Tried again after a throw: read afresh.
          options.perform(record, failures === 0 ? answered : undefined, afterCall).then(
            () => {
              done();
              settle();
            },
            (error: unknown) => {
              done();
              options.onError?.(error, record);
              later(Math.min(MAX_HOLD_MS, 500 * 2 ** Math.min(failures, 7)), () =>
                run(record, undefined, settle, failures + 1),
              );
            },
          );
        }),
    );
  };

  /** Appends the calls set aside, each due after the first retry's delay, then settles them. */
  const setAside = async (records: readonly { record: WebhookCallScheduled; settle: () => void }[]) => {
    if (records.length === 0) return;
    const at = now();
    const events = records.flatMap(({ record }) =>
      decided(callRecords.decide(setAsideOf(record, at + options.setAsideDelayMs, at))),
    );
    await callRecords.commit(events);
    for (const { settle } of records) settle();
  };

  const consumer = await store.consumeScheduled<WebhookCallScheduled>({
    settle: 'handed-off',
    groupId: options.groupId,
    topics,
    topicConfigs: topics.map((topic) => webhookCallTopicConfig(topic, options.partitions)),
    isRecord: isWebhookCallScheduled,
    ...(options.accept && { accept: options.accept }),
    startNewGroupAt: options.startNewGroupAt,
    sessionTimeoutMs: options.sessionTimeoutMs,
    maxWaitTimeInMs: 100,
    partitionsConsumedConcurrently: 6,
    ...(options.now && { now: options.now }),
    ...(options.onError && { onError: options.onError }),
    // Room for a call, or the batch waits (heartbeating) for one to finish: bounded memory, a fair share for
    // every endpoint.
    busy,
    freed: () => Promise.race([pool.finished(), new Promise<void>((r) => recorded.push(r))]),
    begin: async (records) => {
      // Unread (Redis away): each call reads its own mark when its turn comes.
      const answered = await options.answered?.(records).catch(() => undefined);
      // Left unsettled when the batch is abandoned (a rebalance, a stop): fetched again from the last commit.
      const asides: { record: WebhookCallScheduled; settle: () => void }[] = [];
      return {
        take: (record, settle) => {
          const endpoint = `${record.metadata.organizationId}/${record.data.webhookId}`;
          if (options.retries > 0 && pool.backedUp(endpoint)) asides.push({ record, settle });
          else run(record, answered?.has(record.data.callId), settle);
        },
        // Kafka out of reach: they wait in their queue instead (settled when made), rather than holding the commits.
        end: () =>
          setAside(asides).catch((error: unknown) => {
            options.onError?.(error, undefined);
            for (const { record, settle } of asides) run(record, answered?.has(record.data.callId), settle);
          }),
      };
    },
    drain: async () => {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      await pool.idle();
      while (recording > 0) await new Promise<void>((r) => recorded.push(r));
    },
  });

  return { consumer: consumer.consumer, pool, stop: () => consumer.stop() };
}
