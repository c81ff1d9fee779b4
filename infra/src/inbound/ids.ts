import { INBOUND_HOOK_ID } from '@sendline/domain';
import { nameBasedId } from '../ids';
import { callIdOf } from '../webhooks/calls';

/**
 * The name-based ids of inbound messages, their events and their hook calls, shared by the inbound reader (which
 * records them) and the API (which reads a message's call back, retries it, bypasses a blocked one): the same
 * whenever they are decided again.
 */
const INBOUND_NAMESPACE = 'sendline.inbound-message';

/** The inbound message of a received mail for one organization. */
export function inboundMessageIdOf(receivedId: string, organizationId: string): string {
  return nameBasedId(INBOUND_NAMESPACE, receivedId, organizationId);
}

/** The event id of a message's InboundMessageReceived (its first call's source). */
export function inboundReceivedEventIdOf(messageId: string): string {
  return nameBasedId(INBOUND_NAMESPACE, messageId, 'received');
}

/** The event id of a message's InboundMessageBypassed (its call's source once bypassed). */
export function inboundBypassEventIdOf(messageId: string): string {
  return nameBasedId(INBOUND_NAMESPACE, messageId, 'bypassed');
}

/** The call that posts a message: from its InboundMessageReceived, or from its bypass for one that was blocked. */
export function inboundCallIdOf(messageId: string, bypassed: boolean): string {
  return callIdOf(bypassed ? inboundBypassEventIdOf(messageId) : inboundReceivedEventIdOf(messageId), INBOUND_HOOK_ID);
}
