import { noWebhookTriggers, type WebhookConfig, type WebhookTriggers } from '@sendline/domain';
import type { MessageSummary } from '../../src';

export const ORG = 'org-7f3a';
export const OTHER_ORG = 'org-0000';
export const MESSAGE_ID = '0b8e7c52-2f0c-4c4e-9d55-5d3c1a7f9e10';
export const AT = Date.UTC(2026, 10, 23, 9, 30, 0);

export const meta = (eventId: string, organizationId = ORG, occurredAt = AT) => ({
  eventId,
  organizationId,
  occurredAt,
  schemaVersion: 1,
});

export const SUMMARY: MessageSummary = {
  from: 'billing@shop.example',
  subject: 'Your invoice',
  tag: 'invoice',
  metadata: { customerId: 'c-42' },
  messageStream: 'outbound',
};

export function aWebhook(
  webhookId: number,
  on: Partial<Record<'delivery' | 'bounce' | 'subscriptionChange' | 'spamComplaint', boolean>>,
  organizationId = ORG,
): WebhookConfig {
  const triggers: WebhookTriggers = noWebhookTriggers();
  if (on.delivery) triggers.delivery = { enabled: true };
  if (on.bounce) triggers.bounce = { enabled: true, includeContent: false };
  if (on.subscriptionChange) triggers.subscriptionChange = { enabled: true };
  if (on.spamComplaint) triggers.spamComplaint = { enabled: true, includeContent: false };
  return {
    webhookId,
    url: `https://hooks.shop.example/${webhookId}`,
    messageStream: 'outbound',
    httpAuth: null,
    httpHeaders: [],
    triggers,
    signingSecretSealed: 'sealed',
    createdAt: AT,
    updatedAt: AT,
    organizationId,
    enabled: Object.values(on).some(Boolean),
  };
}
