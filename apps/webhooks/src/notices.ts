import { SystemMailRefused, type SystemMail, type SystemMessage } from '@sendline/application';
import type { WebhookDisabled } from '@sendline/domain';
import { positionNewGroup, type EventStore, type RunningConsumer } from '@sendline/infra';

/**
 * The admins' notices: a consumer of the accounts topic (its own group) that tells an organization's admins of
 * each webhook disabled for failing, from the WebhookDisabled the domain decided (which names the admins then),
 * by email through our own sending pipeline, from the system sender (SystemMail). Its offset is committed after the
 * notices went out, so a crash between the disabling and the notices loses none; each notice is sent once-keyed by
 * the event and the address, so the event read again after a crash appends the same message, delivered once.
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
    // An email is an effect outside: an unknown failure is dead-lettered, not retried blindly (Kafka or Redis out
    // of reach is waited out as everywhere).
    retryUnknownErrors: false,
    sessionTimeoutMs: options.sessionTimeoutMs,
    ...(options.onError && { onError: (error: unknown) => options.onError!(error) }),
  });
}

/** The email an admin gets when a webhook of their organization was disabled. */
export function webhookDisabledNotice(event: WebhookDisabled, admin: string): SystemMessage {
  const { webhookId, url, failingSince, reason } = event.data;
  const since = new Date(failingSince).toISOString();
  const at = new Date(event.metadata.occurredAt).toISOString();
  return {
    to: [admin],
    subject: `Webhook ${webhookId} was disabled: every call failed since ${since}`,
    textBody: [
      `Your organization's webhook ${webhookId} (${url}) was disabled at ${at}.`,
      '',
      `Every call to it failed since ${since}; the last one: ${reason}.`,
      'Sendline no longer calls it, and the calls still waiting for it were given up (see its delivery log:',
      `GET /v1/webhooks/${webhookId}/deliveries).`,
      '',
      'Once the endpoint answers again, save the webhook (PUT /v1/webhooks/' +
        `${webhookId}, even unchanged) to enable it; a call can be sent again from the delivery log.`,
      '',
      'You get this email as an admin of the organization.',
      '',
    ].join('\n'),
    tag: 'webhook-disabled',
  };
}

/**
 * Sends each admin named by the event their notice, once (see startNotices). A recipient the send path refuses
 * (suppressed, not an address) is skipped and logged; a system organization that is not set up throws (the event
 * is dead-lettered, to be sent again once it is: `npm run admin -- system setup`).
 */
export function noticesBy(
  mail: Pick<SystemMail, 'send'>,
  warn: (message: string, fields: Record<string, unknown>) => void = () => undefined,
): (event: WebhookDisabled) => Promise<void> {
  return async (event) => {
    for (const admin of event.data.notifyAdmins) {
      try {
        await mail.send(webhookDisabledNotice(event, admin), {
          key: `webhook-disabled:${event.metadata.eventId}:${admin}`,
          firstAt: event.metadata.occurredAt,
        });
      } catch (error) {
        const notSetUp =
          error instanceof SystemMailRefused &&
          (error.code === 'SenderSignatureNotFound' || error.code === 'SenderSignatureNotConfirmed');
        if (!(error instanceof SystemMailRefused) || notSetUp) throw error;
        warn('webhook disabled: an admin could not be told', { code: error.code, webhookId: event.data.webhookId });
      }
    }
  };
}
