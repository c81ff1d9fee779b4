/**
 * One attempt of one webhook call: the domain's WebhookCallScheduled (domain/src/webhookCalls/), decided by its
 * commands and appended through infra's CommandHandler (commands.ts).
 */
export { isWebhookCallScheduled, type WebhookCallScheduled, type WebhookCallScheduledData } from '@sendline/domain';
