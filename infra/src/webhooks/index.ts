/**
 * What the webhooks process and the API share: a call's ids and the CommandHandler its records (the domain's
 * WebhookCallScheduled) are appended through (calls.ts), and the delivery log in Redis (deliveryLog.ts): the process
 * writes each attempt, the API reads a webhook's deliveries and redelivers a call from its first record.
 */
export * from './calls';
export * from './deliveryLog';
