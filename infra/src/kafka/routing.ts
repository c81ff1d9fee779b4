import { defaultTopicNames, type TopicNames } from './topics';

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

/**
 * Topic and key of an event (the architecture page's table): a message's events
 * by message id, so they stay in order; a suppression by organization and
 * lowercased address, so compaction keeps the latest word on each address; an
 * account entity by its own id, so compaction keeps each entity's latest state.
 */
export function routeEvent(event: RoutableEvent, topics: TopicNames = defaultTopicNames): Route {
  const organizationId = event.metadata.organizationId;
  const type = event.type;
  if (type.startsWith('Message')) return { topic: topics.messages, key: field(event, 'messageId') };
  if (type.startsWith('Delivery')) return { topic: topics.deliveryRetries, key: field(event, 'messageId') };
  if (type.startsWith('Suppression')) {
    return { topic: topics.suppressions, key: `${organizationId}:${field(event, 'emailAddress').toLowerCase()}` };
  }
  if (type.startsWith('Organization')) return { topic: topics.accounts, key: `organization:${organizationId}` };
  if (type.startsWith('Member')) {
    return { topic: topics.accounts, key: `member:${organizationId}:${field(event, 'email').toLowerCase()}` };
  }
  if (type.startsWith('Domain'))
    return { topic: topics.accounts, key: `domain:${organizationId}:${field(event, 'domain')}` };
  if (type.startsWith('ApiKey'))
    return { topic: topics.accounts, key: `apikey:${organizationId}:${field(event, 'keyId')}` };
  if (type.startsWith('Allowance')) return { topic: topics.accounts, key: `allowance:${organizationId}` };
  throw new Error(`no topic for event type ${type}`);
}
