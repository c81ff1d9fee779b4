import { eventSchemas } from '@sendline/schemas';
import { routeEvent } from '../kafka/routing';
import type { TopicNames } from '../kafka/topics';
import { retry, type RetryOptions } from '../retry';
import type { EventCodec } from './codec';

/** How long provisioning keeps trying one schema: about 12 s of waiting in all, for a registry that has only just started. */
const SCHEMA_REGISTRATION_RETRY: RetryOptions = { maxAttempts: 6, initialDelayMs: 500, maxDelayMs: 5_000 };

/**
 * Registers every event type's schema under the subject of the topic it is written to.
 * A failure that says it is retriable is tried again with backoff: right after it
 * starts, Apicurio (kafkasql storage) can answer 409 "artifact already exists" to a
 * subject its own log has just created, and the same request succeeds once its
 * storage has caught up. Returns how many schemas are registered.
 */
export async function registerEventSchemas(
  codec: Pick<EventCodec, 'schemaId'>,
  topics: TopicNames,
  options: Partial<RetryOptions> = {},
): Promise<number> {
  let registered = 0;
  for (const type of eventSchemas.keys()) {
    const topic = routeEvent(sampleOf(type), topics).topic;
    await retry(() => codec.schemaId(topic, type), { ...SCHEMA_REGISTRATION_RETRY, ...options });
    registered++;
  }
  return registered;
}

/** Just enough of an event for routing to name its topic. */
function sampleOf(type: string) {
  return {
    type,
    data: { messageId: 'x', emailAddress: 'x', email: 'x', domain: 'x', keyId: 'x', callId: 'x', receivedId: 'x' },
    metadata: { organizationId: 'x' },
  };
}
