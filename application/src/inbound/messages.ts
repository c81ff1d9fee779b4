import {
  DomainError,
  INBOUND_HOOK_ID,
  inboundMessageDecider,
  type InboundMessageEvent,
  type WebhookCallScheduledData,
} from '@sendline/domain';
import {
  attemptEventIdOf,
  CommandHandler,
  inboundBypassEventIdOf,
  inboundCallIdOf,
  inboundReceivedEventIdOf,
  webhookCallCommands,
  type EventAppender,
  type InboundMessageReader,
  type InboundSearch,
  type StoredInboundMessage,
  type WebhookCallCommands,
  type WebhookDeliveryAttempt,
  type WebhookDeliveryLog,
} from '@sendline/infra';

/**
 * An organization's inbound messages (Postmark's `/messages/inbound`): searched and shown from the activity store,
 * their status completed from the webhooks' delivery log (Processed, Scheduled, Failed: the outcome of the message's
 * hook call), a failed one posted again, a blocked one let through.
 */

/** Postmark's statuses of an inbound message. */
export type InboundStatus = 'Queued' | 'Blocked' | 'Processed' | 'Scheduled' | 'Failed';
export const INBOUND_STATUSES: readonly InboundStatus[] = ['Queued', 'Blocked', 'Processed', 'Scheduled', 'Failed'];

export interface InboundMessageSummary extends StoredInboundMessage {
  statusNow: InboundStatus;
  /** The hook call's last attempt, when it made one. */
  lastAttempt?: WebhookDeliveryAttempt;
}

export interface InboundQuery extends Omit<InboundSearch, 'blocked'> {
  status?: InboundStatus;
}

/** How many messages a status other than Blocked is looked for among (it is known only once the log is read). */
export const STATUS_SEARCH_WINDOW = 1000;

export function statusOf(message: StoredInboundMessage, attempt: WebhookDeliveryAttempt | undefined): InboundStatus {
  if (message.status === 'Blocked' && !message.bypassed) return 'Blocked';
  if (!attempt) return 'Queued';
  switch (attempt.status) {
    case 'Delivered':
      return 'Processed';
    case 'Retrying':
      return 'Scheduled';
    case 'Failed':
    case 'Dropped':
      return 'Failed';
  }
}

export class InboundMessages {
  private readonly calls: WebhookCallCommands;
  private readonly messages: CommandHandler<
    ReturnType<typeof inboundMessageDecider.initialState>,
    Parameters<typeof inboundMessageDecider.decide>[0],
    InboundMessageEvent
  >;

  constructor(
    private readonly deps: {
      reader: InboundMessageReader;
      log: WebhookDeliveryLog;
      store: EventAppender;
      now: () => number;
    },
  ) {
    this.calls = webhookCallCommands(deps.store);
    this.messages = new CommandHandler({ decider: inboundMessageDecider, store: deps.store });
  }

  async search(
    organizationId: string,
    query: InboundQuery,
  ): Promise<{ total: number; messages: InboundMessageSummary[] }> {
    const { status, ...search } = query;
    if (status === undefined || status === 'Blocked') {
      const found = await this.deps.reader.search(organizationId, {
        ...search,
        ...(status === 'Blocked' && { blocked: true }),
      });
      return { total: found.total, messages: await this.withStatus(organizationId, found.messages) };
    }
    // The other statuses are the hook call's outcome: looked for among the newest messages not blocked.
    const window = await this.deps.reader.search(organizationId, {
      ...search,
      blocked: false,
      offset: 0,
      count: STATUS_SEARCH_WINDOW,
    });
    const matching = (await this.withStatus(organizationId, window.messages)).filter((m) => m.statusNow === status);
    return { total: matching.length, messages: matching.slice(query.offset, query.offset + query.count) };
  }

  /** One message with its status; refused with 'InboundMessageNotFound' when the organization has none of this id. */
  async details(organizationId: string, messageId: string): Promise<InboundMessageSummary> {
    const message = await this.deps.reader.get(organizationId, messageId);
    if (!message) throw notFound(messageId);
    const [summary] = await this.withStatus(organizationId, [message]);
    return summary!;
  }

  /** Posts a failed message again, once, now (the hook call's first record again, manual). */
  async retry(organizationId: string, messageId: string): Promise<void> {
    const message = await this.details(organizationId, messageId);
    if (message.statusNow !== 'Failed') {
      throw new DomainError(
        'InboundMessageNotFailed',
        `Inbound message ${messageId} is ${message.statusNow}: only a failed message can be retried.`,
        { messageId },
      );
    }
    const now = this.deps.now();
    const first = this.firstCall(message, now);
    await this.calls.handle({
      type: 'RedeliverWebhookCall',
      data: { first },
      metadata: { organizationId, now, eventIds: [attemptEventIdOf(first.callId, 1, `manual at ${now}`)] },
    });
  }

  /** Lets a blocked message through: it is recorded as bypassed and posted now. */
  async bypass(organizationId: string, messageId: string): Promise<void> {
    const message = await this.deps.reader.get(organizationId, messageId);
    if (!message) throw notFound(messageId);
    const now = this.deps.now();
    const state = message.bypassed
      ? ({ status: 'Bypassed', messageId } as const)
      : ({ status: message.status, messageId } as const);
    const events = await this.messages.handle(
      {
        type: 'BypassInboundMessage',
        data: { messageId },
        metadata: { organizationId, now, eventIds: [inboundBypassEventIdOf(messageId)] },
      },
      state,
    );
    if (events.length === 0) return;
    const callId = inboundCallIdOf(messageId, true);
    await this.calls.handle({
      type: 'ScheduleWebhookCall',
      data: {
        callId,
        webhookId: INBOUND_HOOK_ID,
        recordType: 'Inbound',
        sourceEventId: inboundBypassEventIdOf(messageId),
        body: message.payload,
      },
      metadata: { organizationId, now, eventIds: [attemptEventIdOf(callId, 1)] },
    });
  }

  private firstCall(message: StoredInboundMessage, now: number): WebhookCallScheduledData {
    const bypassed = message.bypassed;
    return {
      callId: inboundCallIdOf(message.messageId, bypassed),
      webhookId: INBOUND_HOOK_ID,
      recordType: 'Inbound',
      sourceEventId: bypassed ? inboundBypassEventIdOf(message.messageId) : inboundReceivedEventIdOf(message.messageId),
      body: message.payload,
      attempt: 1,
      retry: 0,
      firstScheduledAt: now,
      dueAt: now,
      manual: true,
    };
  }

  private async withStatus(organizationId: string, messages: StoredInboundMessage[]): Promise<InboundMessageSummary[]> {
    const callIds = messages.map((m) => inboundCallIdOf(m.messageId, m.bypassed));
    const attempts = await this.deps.log.lastAttempts(organizationId, callIds);
    return messages.map((message, i) => {
      const lastAttempt = attempts.get(callIds[i]!);
      return { ...message, statusNow: statusOf(message, lastAttempt), ...(lastAttempt && { lastAttempt }) };
    });
  }
}

function notFound(messageId: string): DomainError {
  return new DomainError('InboundMessageNotFound', `Inbound message ${messageId} was not found.`, { messageId });
}
