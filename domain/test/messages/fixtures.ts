import type { EventMetadata } from '../../src/event';
import type {
  AcceptMessage,
  DeliveryOutcome,
  MessageAccepted,
  MessageAcceptedData,
  MessageDeferred,
  MessageDelivered,
  MessageSent,
  RecordDeliveryOutcome,
  RecordSent,
} from '../../src/messages';
import type { OutboundMessage } from '../../src/validation';

export const ORG = 'org-7f3a';
export const OTHER_ORG = 'org-0000';
export const MESSAGE_ID = '0b8e7c52-2f0c-4c4e-9d55-5d3c1a7f9e10';
export const ACCEPTED_AT = Date.UTC(2025, 0, 6, 9, 30, 0);
export const SENT_AT = ACCEPTED_AT + 2_000;
export const MINUTE = 60_000;

export function metadata(eventId: string, occurredAt: number, organizationId = ORG): EventMetadata {
  return { eventId, organizationId, occurredAt, schemaVersion: 1 };
}

/** A message as validateSendRequest returns it: two To, one Cc (a duplicate in other case), one Bcc. */
export function aMessage(overrides: Partial<OutboundMessage> = {}): OutboundMessage {
  return {
    from: { email: 'billing@shop.example', name: 'Shop Billing' },
    to: [{ email: 'Alice@Customer.example', name: 'Alice' }, { email: 'bob@customer.example' }],
    cc: [{ email: 'alice@customer.example' }],
    bcc: [{ email: 'audit@shop.example' }],
    replyTo: [{ email: 'support@shop.example' }],
    subject: 'Your invoice',
    tag: 'invoice',
    textBody: 'Hello, your invoice is attached.',
    htmlBody: '<p>Hello, your invoice is attached.</p>',
    headers: [{ name: 'X-Campaign', value: 'january' }],
    metadata: { customerId: 'c-42' },
    attachments: [{ name: 'invoice.pdf', content: 'JVBERi0xLjQ=', contentType: 'application/pdf' }],
    trackOpens: false,
    trackLinks: 'None',
    messageStream: 'outbound',
    sizeBytes: 128,
    ...overrides,
  };
}

export function acceptMessage(
  options: { suppressed?: string[]; message?: OutboundMessage; eventIds?: string[]; organizationId?: string } = {},
): AcceptMessage {
  return {
    type: 'AcceptMessage',
    data: {
      messageId: MESSAGE_ID,
      message: options.message ?? aMessage(),
      suppressedAddresses: new Set(options.suppressed ?? []),
    },
    metadata: {
      organizationId: options.organizationId ?? ORG,
      now: ACCEPTED_AT,
      eventIds: options.eventIds ?? ['ev-accepted'],
    },
  };
}

export function messageAccepted(overrides: Partial<MessageAcceptedData> = {}): MessageAccepted {
  return {
    type: 'MessageAccepted',
    data: {
      messageId: MESSAGE_ID,
      ...aMessage(),
      activeRecipients: ['alice@customer.example', 'bob@customer.example', 'audit@shop.example'],
      suppressedRecipients: [],
      submittedAt: ACCEPTED_AT,
      ...overrides,
    },
    metadata: metadata('ev-accepted', ACCEPTED_AT),
  };
}

export function recordSent(options: { messageId?: string; organizationId?: string } = {}): RecordSent {
  return {
    type: 'RecordSent',
    data: { messageId: options.messageId ?? MESSAGE_ID },
    metadata: { organizationId: options.organizationId ?? ORG, now: SENT_AT, eventIds: ['ev-sent'] },
  };
}

export function messageSent(): MessageSent {
  return { type: 'MessageSent', data: { messageId: MESSAGE_ID }, metadata: metadata('ev-sent', SENT_AT) };
}

export function recordOutcome(
  recipient: string,
  outcome: DeliveryOutcome,
  options: { now?: number; eventId?: string; returnPath?: string } = {},
): RecordDeliveryOutcome {
  return {
    type: 'RecordDeliveryOutcome',
    data: {
      messageId: MESSAGE_ID,
      recipient,
      outcome,
      ...(options.returnPath !== undefined && { returnPath: options.returnPath }),
    },
    metadata: { organizationId: ORG, now: options.now ?? SENT_AT + 1_000, eventIds: [options.eventId ?? 'ev-outcome'] },
  };
}

export const delivered: DeliveryOutcome = {
  kind: 'Delivered',
  smtpResponse: '250 2.0.0 OK queued as 4F2A1',
  destinationServer: 'mx1.customer.example',
};

export const hardBounced: DeliveryOutcome = {
  kind: 'HardBounced',
  smtpResponse: '550 5.1.1 <bob@customer.example>: user unknown',
  statusCode: 550,
  enhancedStatus: '5.1.1',
  summary: 'Bad destination mailbox address',
};

export const policyRejected: DeliveryOutcome = {
  kind: 'PolicyRejected',
  smtpResponse: '550 5.7.26 Unauthenticated email is not accepted',
  statusCode: 550,
  enhancedStatus: '5.7.26',
  summary: 'Multiple authentication checks failed',
};

export function deferred(attempt: number, nextAttemptAt = SENT_AT + attempt * MINUTE): DeliveryOutcome {
  return {
    kind: 'Deferred',
    reason: 'response',
    smtpResponse: '451 4.2.0 Try again later',
    summary: 'Other or undefined mailbox status',
    attempt,
    nextAttemptAt,
  };
}

export const softBouncedRetriesExhausted: DeliveryOutcome = {
  kind: 'SoftBounced',
  reason: 'RetriesExhausted',
  summary: 'The receiving server did not answer in time',
  attempts: 12,
};

export function messageDelivered(recipient: string): MessageDelivered {
  return {
    type: 'MessageDelivered',
    data: {
      messageId: MESSAGE_ID,
      recipient,
      smtpResponse: '250 2.0.0 OK queued as 4F2A1',
      destinationServer: 'mx1.customer.example',
    },
    metadata: metadata(`ev-delivered-${recipient}`, SENT_AT + 1_000),
  };
}

export function messageDeferred(recipient: string, attempt: number): MessageDeferred {
  return {
    type: 'MessageDeferred',
    data: {
      messageId: MESSAGE_ID,
      recipient,
      reason: 'response',
      smtpResponse: '451 4.2.0 Try again later',
      summary: 'Other or undefined mailbox status',
      attempt,
      nextAttemptAt: SENT_AT + attempt * MINUTE,
    },
    metadata: metadata(`ev-deferred-${recipient}-${attempt}`, SENT_AT + attempt * 1_000),
  };
}
