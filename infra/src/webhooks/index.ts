/**
 * What the webhooks process and the API share: the call record on the webhooks' topics and its ids (calls.ts), and
 * the delivery log in Redis (deliveryLog.ts): the process writes each attempt, the API reads a webhook's deliveries
 * and redelivers a call from its first record.
 */
export * from './calls';
export * from './deliveryLog';
