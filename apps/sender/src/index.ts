export { senderConfigFromEnv, type SenderConfig } from './config';
export { DeliveryLedger, type LedgerUpdate, type MessageLedger, type RecipientEntry } from './ledger';
export { DeliveryPipeline, type DeliveryJob, type PipelineDependencies, type RunReport } from './pipeline';
export { isDeliveryRetryScheduled, type DeliveryRetryScheduled, type DeliveryRetryScheduledData } from './retryRecord';
export { startRetryConsumer, type RetryConsumerOptions, type RunningRetryConsumer } from './retryConsumer';
export { positionNewGroup } from './groups';
export { eventIdFor } from './ids';
export { Limiter } from './limiter';
export { defaultLog, Sender, type Log, type LogLevel, type SenderOptions, type SenderStats } from './sender';
