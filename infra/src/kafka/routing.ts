import {
  ACCOUNT_EVENT_TYPES,
  accountEventKey,
  suppressionKey,
  TEMPLATE_EVENT_TYPES,
  templateEventKey,
  type AccountEvent,
  type TemplateEvent,
} from '@sendline/domain';
import { defaultTopicNames, webhookCallTopic, type TopicNames } from './topics';

export interface RoutableEvent {
  type: string;
  data: object;
  metadata: { organizationId: string };
}

export interface Route {
  topic: string;
  key: string;
}

function field(event: RoutableEvent, name: string): string {
  const value = (event.data as Record<string, unknown>)[name];
  if (typeof value !== 'string' || value === '') {
    throw new Error(`event ${event.type} has no ${name} to key it by`);
  }
  return value;
}

const accountTypes = new Set<string>(ACCOUNT_EVENT_TYPES);
const templateTypes = new Set<string>(TEMPLATE_EVENT_TYPES);

/**
 * Topic and key of an event (the architecture page's table): a message's events
 * by message id, so they stay in order; a suppression by organization and
 * lowercased address, so compaction keeps the latest word on each address; an
 * account entity by its own id (the domain's `accountEventKey`), so compaction
 * keeps each entity's latest state (a template's versions each their own key, templateEventKey); a webhook call by its call id, on the topic of its attempt; mail our MX received
 * by the message its first recipient's return-path token names (so the reports about one message stay in order),
 * else by its own received id; an inbound message by its id.
 */
export function routeEvent(event: RoutableEvent, topics: TopicNames = defaultTopicNames): Route {
  const type = event.type;
  if (type.startsWith('Message')) return { topic: topics.messages, key: field(event, 'messageId') };
  if (type.startsWith('Delivery')) return { topic: topics.deliveryRetries, key: field(event, 'messageId') };
  if (type === 'WebhookCallScheduled') {
    // An attempt waits on its retry's own topic; keyed by the call, so a webhook's calls spread over partitions.
    const retry = (event.data as { retry?: unknown }).retry;
    return { topic: webhookCallTopic(topics, typeof retry === 'number' ? retry : 0), key: field(event, 'callId') };
  }
  if (type.startsWith('Suppression')) {
    return {
      topic: topics.suppressions,
      key: suppressionKey(event.metadata.organizationId, field(event, 'emailAddress')),
    };
  }
  if (type === 'MailReceived') {
    const messageId = (event.data as { messageId?: unknown }).messageId;
    return {
      topic: topics.received,
      key: typeof messageId === 'string' && messageId !== '' ? messageId : field(event, 'receivedId'),
    };
  }
  if (type === 'InboundMessageReceived' || type === 'InboundMessageBypassed') {
    return { topic: topics.inbound, key: field(event, 'messageId') };
  }
  if (accountTypes.has(type)) return { topic: topics.accounts, key: accountEventKey(event as AccountEvent) };
  if (templateTypes.has(type)) return { topic: topics.accounts, key: templateEventKey(event as TemplateEvent) };
  throw new Error(`no topic for event type ${type}`);
}
