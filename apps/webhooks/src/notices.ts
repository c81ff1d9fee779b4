import type { WebhookDisabled } from '@sendline/domain';
import type { EventStore, RunningConsumer } from '@sendline/infra';
import { positionNewGroup } from '@sendline/sender';

/**
 * The admins' notices: a consumer of the accounts topic (its own group) that tells an organization's admins of
 * each webhook disabled for failing, from the WebhookDisabled the domain decided (which names the admins then).
 * Its offset is committed after the notice went out, so a crash between the disabling and the notice loses no
 * notice; the notice is idempotent by the event's id (a repeat after a crash is the same message, see notify).
 */
export interface NoticesOptions {
  store: EventStore;
  groupId: string;
  startNewGroupAt: 'earliest' | 'latest';
  sessionTimeoutMs: number;
  /** Organizations this consumer is for (tests on shared topics); default all. */
  accept?: (organizationId: string) => boolean;
  /** Tells the event's `notifyAdmins` that the webhook was disabled. */
  notify: (event: WebhookDisabled) => Promise<void>;
  onError?: (error: unknown) => void;
}

export async function startNotices(options: NoticesOptions): Promise<RunningConsumer> {
  const { store } = options;
  const topics = [store.topics.accounts];
  await positionNewGroup(store, options.groupId, topics, options.startNewGroupAt);
  return store.consume({
    groupId: options.groupId,
    topics,
    handle: async ({ event }) => {
      if (event.type !== 'WebhookDisabled') return;
      if (options.accept && !options.accept(event.metadata.organizationId)) return;
      await options.notify(event as unknown as WebhookDisabled);
    },
    // A notice retried is the same message (its id is the event's): sent once.
    retryUnknownErrors: true,
    sessionTimeoutMs: options.sessionTimeoutMs,
    ...(options.onError && { onError: (error: unknown) => options.onError!(error) }),
  });
}
