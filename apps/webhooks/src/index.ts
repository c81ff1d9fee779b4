/**
 * The webhooks: Postmark's webhook calls for message deliveries, bounces and suppression changes.
 *
 * - dispatcher.ts: events → call records (decide.ts, the bodies in payloads.ts), appended before the commit.
 * - caller.ts: call records → HTTP calls (http.ts, signed: signature.ts), per-endpoint limits (pool.ts), each
 *   attempt settled in attempts.ts (the next one on the retry schedule: schedule.ts).
 * - stores.ts: message summaries, the delivery log, the webhooks read from the accounts view.
 * - webhooks.ts composes them; config.ts, main.ts: the process.
 */
export { CallAttempts, callHeaders, manualRedelivery, nextAttempt, USER_AGENT } from './attempts';
export { startCaller, type CallerOptions, type RunningCaller } from './caller';
export { isWebhookCallScheduled, type WebhookCallScheduled, type WebhookCallScheduledData } from './callRecord';
export { webhooksConfigFromEnv, type WebhooksConfig } from './config';
export { attemptEventIdOf, callIdOf, decideCalls } from './decide';
export { startDispatcher, type DispatcherOptions } from './dispatcher';
export { AddressRefusedError, WebhookHttp, type CallResult, type WebhookHttpOptions } from './http';
export * from './payloads';
export { EndpointPool } from './pool';
export { nextAttemptAt, parseRetryDelays, POSTMARK_RETRY_DELAYS_MS } from './schedule';
export { secretBytes, signWebhook } from './signature';
export {
  CachedWebhookDirectory,
  DeliveryLog,
  DELIVERY_LOG_LENGTH,
  MessageSummaries,
  type DeliveryAttempt,
  type WebhookDirectory,
} from './stores';
export { defaultLog, Webhooks, type Log, type WebhooksOptions } from './webhooks';
