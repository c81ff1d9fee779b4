import type { MessageAcceptedData } from '@sendline/domain';

/** An accepted message as the sender composes it: one text part from a shop to Ann, unless `overrides` say more. */
export function acceptedMessage(overrides: Partial<MessageAcceptedData> = {}): MessageAcceptedData {
  return {
    messageId: '0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d',
    from: { email: 'orders@shop.example.test', name: 'Shop' },
    to: [{ email: 'ann@example.net', name: 'Ann' }],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Your receipt',
    textBody: 'Thanks for your order.',
    headers: [],
    metadata: {},
    attachments: [],
    trackOpens: false,
    trackLinks: 'None',
    messageStream: 'outbound',
    sizeBytes: 20,
    activeRecipients: ['ann@example.net'],
    suppressedRecipients: [],
    submittedAt: Date.UTC(2026, 10, 1),
    ...overrides,
  } as MessageAcceptedData;
}
