/**
 * The webhooks: Postmark's webhook calls for message deliveries, bounces and suppression changes.
 *
 * - dispatcher.ts: events → call records (decide.ts, the bodies in payloads.ts), appended before the commit.
 * - commands.ts: every call record is decided by the domain's webhook call decider and appended through infra's
 *   CommandHandler (webhookCallCommands, infra/src/webhooks/calls.ts): first attempts, next attempts, calls set
 *   aside; the API's manual redeliveries go the same way (application's WebhookDeliveries).
 * - caller.ts: call records → HTTP calls (http.ts, signed: signature.ts), per-endpoint limits (pool.ts), each
 *   attempt settled in attempts.ts (the next one on the retry schedule: schedule.ts).
 * - stores.ts: message summaries and the webhooks read from the accounts view; the call ids (callIdOf, its
 *   records' ids), the call records' CommandHandler and the delivery log (each webhook's failure streak too) are
 *   infra's (infra/src/webhooks/), which the API uses too; a webhook failing every call for 24 hours is disabled
 *   (attempts.ts, the domain decides) and its organization's admins told (notices.ts).
 * - webhooks.ts composes them; config.ts, main.ts: the process.
 */
export {
  CallAttempts,
  callHeaders,
  OutcomeNotWritten,
  RECORD_RETRY_DELAYS_MS,
  USER_AGENT,
  type DisableFailingWebhook,
} from './attempts';
export { startCaller, type CallerOptions, type RunningCaller } from './caller';
export { WEBHOOKS_NODE_FLAGS, webhooksConfigFromEnv, type WebhooksConfig } from './config';
export { decideCalls } from './decide';
export { startDispatcher, type DispatcherOptions } from './dispatcher';
export { AddressRefusedError, WebhookHttp, type CallResult, type WebhookHttpOptions } from './http';
export * from './payloads';
export { EndpointPool, HARD_QUEUE_FACTOR } from './pool';
export { nextAttemptAt, parseRetryDelays, POSTMARK_RETRY_DELAYS_MS } from './schedule';
export { secretBytes, signWebhook } from './signature';
export { CachedWebhookDirectory, MessageSummaries, type WebhookDirectory } from './stores';
export { noticesBy, startNotices, webhookDisabledNotice, type NoticesOptions } from './notices';
export { defaultLog, disablingBy, Webhooks, type Log, type WebhooksOptions } from './webhooks';
