/**
 * The sender: delivers accepted messages over SMTP and records their outcomes.
 *
 * - sender.ts: the two consumers (email.messages, and the retry schedule: retryConsumer.ts, retryRecord.ts).
 * - pipeline.ts: one delivery attempt, step by step: plan.ts → compose.ts → MessageSent → deliver.ts →
 *   outcomes.ts; the deciders run through infra's CommandHandler (commands.ts).
 * - ledger.ts: the guard against a second send after a 250, and the outcomes the sender appended.
 * - leases.ts: one run of a message at a time across the sender's copies.
 * - config.ts, dependencies.ts, ids.ts, limiter.ts, main.ts: configuration and plumbing.
 */
export { senderConfigFromEnv, type SenderConfig } from './config';
export { connectSenderDependencies, type SenderDependencies } from './dependencies';
export { DeliveryLedger, type LedgerUpdate, type MessageLedger, type RecipientEntry } from './ledger';
export { DeliveryPipeline, type DeliveryJob, type PipelineDependencies, type RunReport } from './pipeline';
export { isDeliveryRetryScheduled, type DeliveryRetryScheduled, type DeliveryRetryScheduledData } from './retryRecord';
export { startRetryConsumer, type RetryConsumerOptions, type RunningRetryConsumer } from './retryConsumer';
export { eventIdFor } from './ids';
export { Limiter } from './limiter';
export { MessageLeases, type HeldMessages } from './leases';
export { defaultLog, Sender, type Log, type LogLevel, type SenderOptions, type SenderStats } from './sender';
