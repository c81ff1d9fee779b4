import type { DomainEvent, MessageAccepted, WebhookCallScheduled, WebhookConfig } from '@sendline/domain';
import {
  positionNewGroup,
  webhookCallCommands,
  type ConsumedEvent,
  type EventStore,
  type RunningConsumer,
  type StoredEvent,
} from '@sendline/infra';
import { decided } from './commands';
import { DISPATCHED_EVENT_TYPES, messageIdOf, scheduleCallsOf } from './decide';
import { summaryOf, type MessageSummary } from './payloads';
import type { MessageSummaries, WebhookDirectory } from './stores';

/**
 * The dispatcher: turns message and suppression events into webhook calls. For a fetched batch of email.messages
 * and email.suppressions (its own consumer group) it
 * 1. keeps the summary of every accepted message of an organization that has a webhook (Tag, Metadata, Subject,
 *    From and MessageStream are only in MessageAccepted; a message's events share its partition, so its
 *    MessageAccepted is read first);
 * 2. decides the calls of each event (decide.ts: one ScheduleWebhookCall per matching webhook, each with a stable
 *    id; the domain's webhook call decider makes each its first attempt's record);
 * 3. appends them to webhooks.calls as WebhookCallScheduled records (one commit of the CommandHandler for the
 *    batch), and only then returns, so the event store
 *    commits the batch's offsets after its calls are durable: a crash never drops a call.
 *
 * A batch decided again (a crash before the commit, an error retried) appends the same calls with the same ids:
 * the caller makes an answered call only once, and a receiver drops a repeat by its Webhook-Id. So an unknown error
 * is retried (`retryUnknownErrors: true`): giving up on it would dead-letter the event and lose its webhooks.
 */
export interface DispatcherOptions {
  store: EventStore;
  groupId: string;
  directory: WebhookDirectory;
  summaries: MessageSummaries;
  startNewGroupAt: 'earliest' | 'latest';
  /** Organizations this dispatcher is for; the others are passed over. Default: all. */
  accept?: (organizationId: string) => boolean;
  sessionTimeoutMs: number;
  now?: () => number;
  onError?: (error: unknown) => void;
  /** Told after each batch's calls are appended (for metrics and benchmarks). */
  onCalls?: (calls: readonly WebhookCallScheduled[]) => void;
}

const dispatched = new Set<string>(DISPATCHED_EVENT_TYPES);

export async function startDispatcher(options: DispatcherOptions): Promise<RunningConsumer> {
  const { store } = options;
  const now = options.now ?? Date.now;
  const topics = [store.topics.messages, store.topics.suppressions];
  await positionNewGroup(store, options.groupId, topics, options.startNewGroupAt);
  const callRecords = webhookCallCommands(store);

  const handleBatch = async (items: ConsumedEvent<StoredEvent>[]) => {
    const events = items
      .map((item) => item.event as DomainEvent<string, unknown>)
      .filter((event) => event.type === 'MessageAccepted' || dispatched.has(event.type))
      .filter((event) => !options.accept || options.accept(event.metadata.organizationId));
    if (events.length === 0) return;

    const organizations = [...new Set(events.map((event) => event.metadata.organizationId))];
    const webhooks = new Map<string, WebhookConfig[]>();
    await Promise.all(
      organizations.map(async (id) => {
        const all = (await options.directory.webhooks(id)).filter((webhook) => webhook.enabled);
        if (all.length > 0) webhooks.set(id, all);
      }),
    );
    if (webhooks.size === 0) return;

    // Summaries of this batch's accepted messages, kept for their later events (in this batch or later ones).
    const fresh = new Map<string, MessageSummary>();
    for (const event of events) {
      if (event.type === 'MessageAccepted' && webhooks.has(event.metadata.organizationId)) {
        const accepted = event as unknown as MessageAccepted;
        fresh.set(accepted.data.messageId, summaryOf(accepted));
      }
    }
    await options.summaries.put(fresh);
    const wanted = new Set<string>();
    for (const event of events) {
      const messageId = messageIdOf(event);
      if (event.type !== 'MessageAccepted' && messageId && !fresh.has(messageId)) {
        if (webhooks.has(event.metadata.organizationId)) wanted.add(messageId);
      }
    }
    const known = await options.summaries.get([...wanted]);

    const at = now();
    const calls = events.flatMap((event) => {
      const own = webhooks.get(event.metadata.organizationId);
      if (!own || event.type === 'MessageAccepted') return [];
      const messageId = messageIdOf(event);
      const summary = messageId ? (fresh.get(messageId) ?? known.get(messageId)) : undefined;
      return scheduleCallsOf(event, own, summary, at).flatMap((command) => decided(callRecords.decide(command)));
    });
    if (calls.length === 0) return;
    await callRecords.commit(calls);
    options.onCalls?.(calls);
  };

  return store.consume({
    groupId: options.groupId,
    topics,
    handleBatch,
    retryUnknownErrors: true,
    sessionTimeoutMs: options.sessionTimeoutMs,
    partitionsConsumedConcurrently: 6,
    ...(options.onError && { onError: (error: unknown) => options.onError!(error) }),
  });
}
