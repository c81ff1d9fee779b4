import type { Consumer } from 'kafkajs';
import type { MessageAccepted } from '@sendline/domain';
import {
  DkimKeys,
  InfrastructureError,
  MxRouter,
  positionNewGroup,
  RelayRouter,
  returnPathKey,
  SmtpDelivery,
  topicConfigs,
  type AccountsView,
  type ConsumedEvent,
  type EventStore,
  type MailRouter,
  type Redis,
  type RunningConsumer,
  type StoredEvent,
  type SuppressionView,
} from '@sendline/infra';
import type { SenderConfig } from './config';
import { DeliveryLedger } from './ledger';
import { Limiter } from './limiter';
import { DeliveryPipeline, type RunReport } from './pipeline';
import { startRetryConsumer, type RunningRetryConsumer } from './retryConsumer';
import { MessageLeases } from './leases';

/**
 * The sender: two consumers over one delivery pipeline.
 *
 * - email.messages (group `config.groupId`, EventStore.consume, unknown errors not retried): each
 *   MessageAccepted is delivered (first attempt). A fetched batch is handled in chunks of
 *   `config.chunkSize` messages; a chunk's offsets are committed once its outcomes are appended (the last
 *   chunk's within `config.commitIntervalMs`, one commit for every partition).
 * - email.delivery-retries (group `config.retryGroupId`): each DeliveryRetryScheduled is held until due,
 *   then its recipients are attempted again (see retryConsumer.ts).
 *
 * `stop()` is the graceful shutdown: no new batch is taken; the chunk in hand finishes (its deliveries,
 * its outcomes, its commit); the rest of the batch and every retry record not yet handled are handed
 * back uncommitted. After `config.shutdownTimeoutMs` it gives up waiting (whatever is still in hand is
 * uncommitted and will be handled again, with the ledger guarding against a second send).
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type Log = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;

export interface SenderOptions {
  store: EventStore;
  redis: Redis;
  accounts: AccountsView;
  suppressions: SuppressionView;
  /** Opens the DKIM private keys and keys the return-path tokens (SENDLINE_SECRET_KEY). */
  secretKey: Buffer;
  config: SenderConfig;
  /** Which organizations' messages this sender delivers; default: all (tests restrict it to their own). */
  accept?: (organizationId: string) => boolean;
  /** Where mail goes; default: the relay of the config, else MX lookups. */
  router?: MailRouter;
  now?: () => number;
  random?: () => number;
  log?: Log;
}

export interface SenderStats {
  runs: number;
  messages: number;
  transactions: number;
  outcomes: RunReport['outcomes'];
  /** Copies of a MessageAccepted skipped (the message is delivered from its first copy). */
  duplicates: number;
  failures: number;
}

export function defaultLog(component = 'sender'): Log {
  return (level, message, fields = {}) => {
    const line = JSON.stringify({ time: new Date().toISOString(), level, logger: component, msg: message, ...fields });
    (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(`${line}\n`);
  };
}

class Stopping extends InfrastructureError {
  constructor() {
    super('SenderStopping', 'the sender is stopping: the rest of the batch is handed back', { retriable: true });
  }
}

export class Sender {
  readonly stats: SenderStats = {
    runs: 0,
    messages: 0,
    transactions: 0,
    outcomes: { Delivered: 0, HardBounced: 0, PolicyRejected: 0, SoftBounced: 0, Deferred: 0 },
    duplicates: 0,
    failures: 0,
  };
  private main: RunningConsumer | undefined;
  private retries: RunningRetryConsumer | undefined;
  private stopping = false;
  private readonly pipeline: DeliveryPipeline;
  private readonly delivery: SmtpDelivery;
  /** The guards' own Redis connection: a guard never waits behind the ledger's batch reads and writes. */
  private readonly guardRedis: Redis;
  private readonly log: Log;

  private constructor(private readonly options: SenderOptions) {
    const { config } = options;
    this.log = options.log ?? defaultLog();
    const router =
      options.router ??
      (config.relay
        ? new RelayRouter(config.relay.host, config.relay.port)
        : new MxRouter({ ...(config.dnsServers && { servers: config.dnsServers }), port: config.mxPort }));
    this.delivery = new SmtpDelivery(router, {
      heloName: config.heloName,
      poolSize: config.poolSize,
      maxMessagesPerConnection: config.maxMessagesPerConnection,
      connectionTimeoutMs: config.connectionTimeoutMs,
      greetingTimeoutMs: config.greetingTimeoutMs,
      socketTimeoutMs: config.socketTimeoutMs,
      transactionTimeoutMs: config.transactionTimeoutMs,
    });
    this.guardRedis = options.redis.duplicate();
    this.guardRedis.on('error', () => undefined); // seen by the guard writes that fail (and retried there)
    this.pipeline = new DeliveryPipeline({
      store: options.store,
      ledger: new DeliveryLedger(
        options.redis,
        config.retryPolicy.giveUpAfterMs + 7 * 24 * 60 * 60 * 1000,
        config.groupId,
        { guardRedis: this.guardRedis },
      ),
      dkimKeys: new DkimKeys(options.accounts, options.secretKey),
      returnPath: { key: returnPathKey(options.secretKey), domain: config.returnPathDomain },
      delivery: this.delivery,
      suppressions: options.suppressions,
      limiter: new Limiter(config.concurrency),
      leases: new MessageLeases(options.redis, config.groupId),
      retryPolicy: config.retryPolicy,
      now: options.now ?? Date.now,
      random: options.random ?? Math.random,
    });
  }

  /** Starts both consumers; resolves once they have joined their groups. */
  static async start(options: SenderOptions): Promise<Sender> {
    const sender = new Sender(options);
    await sender.begin();
    return sender;
  }

  private async begin(): Promise<void> {
    const { store, config } = this.options;
    const topics = store.topics;
    await store.ensureTopics(topicConfigs(topics).filter((topic) => topic.topic === topics.deliveryRetries));
    await positionNewGroup(store, config.groupId, [topics.messages], config.startNewGroupsAt);

    let resolveConsumer: (consumer: Consumer) => void = () => undefined;
    const consumerReady = new Promise<Consumer>((resolve) => (resolveConsumer = resolve));
    this.main = await store.consume({
      groupId: config.groupId,
      topics: [topics.messages],
      fromBeginning: true,
      retryUnknownErrors: false,
      // The sender's own MessageSent and outcomes are on this topic too: passed over undecoded.
      eventTypes: ['MessageAccepted'],
      // A retriable failure (Kafka or Redis away) is tried again for about 40 minutes before the event is
      // dead-lettered; the ledger makes each try safe. Anything else is dead-lettered at once.
      maxAttempts: 100,
      maxRetryDelayMs: 30_000,
      sessionTimeoutMs: config.sessionTimeoutMs,
      partitionsConsumedConcurrently: config.partitionsConsumedConcurrently,
      commitIntervalMs: config.commitIntervalMs,
      handleBatch: async (items) => this.handleAccepted(items, await consumerReady),
      onError: (error, item) => {
        if (error instanceof Stopping) return;
        if ((error as { code?: string }).code === 'OffsetCommitFailed') {
          // Nothing was lost: those messages are read again, and the ledger skips what they were.
          this.log('warn', 'offset commit failed; handled messages will be read again', { error: String(error) });
          return;
        }
        this.stats.failures++;
        this.log('error', 'delivery failed', {
          error: String(error),
          code: (error as { code?: string }).code,
          ...(item && {
            messageId: (item.event.data as { messageId?: string }).messageId,
            offset: item.position.offset,
          }),
        });
      },
    });
    resolveConsumer(this.main.consumer);

    this.retries = await startRetryConsumer({
      store,
      groupId: config.retryGroupId,
      topic: topics.deliveryRetries,
      startNewGroupAt: config.startNewGroupsAt,
      sessionTimeoutMs: config.sessionTimeoutMs,
      ...(this.options.accept && { accept: (record) => this.options.accept!(record.metadata.organizationId) }),
      handle: async (record) => {
        const acceptedValue = Buffer.from(record.data.acceptedEvent, 'base64');
        const accepted = (await store.codec.decode(acceptedValue)) as MessageAccepted;
        await this.runPipeline([
          {
            accepted,
            acceptedValue,
            attempt: record.data.attempt + 1,
            firstAttemptAt: record.data.firstAttemptAt,
            recipients: record.data.recipients,
          },
        ]);
      },
      onError: (error, record) => {
        this.stats.failures++;
        this.log('error', 'retry failed', {
          error: String(error),
          code: (error as { code?: string }).code,
          ...(record && { messageId: record.data.messageId, attempt: record.data.attempt + 1 }),
        });
      },
    });
    this.log('info', 'sender started', {
      group: config.groupId,
      retryGroup: config.retryGroupId,
      relay: config.relay ? `${config.relay.host}:${config.relay.port}` : undefined,
      concurrency: config.concurrency,
    });
  }

  private async handleAccepted(items: ConsumedEvent<StoredEvent>[], consumer: Consumer): Promise<void> {
    const accept = this.options.accept;
    for (let start = 0; start < items.length; start += this.options.config.chunkSize) {
      if (this.stopping) throw new Stopping();
      const chunk = items.slice(start, start + this.options.config.chunkSize);
      // Only MessageAccepted reaches this handler (eventTypes above).
      const jobs = chunk
        .filter((item) => !accept || accept(item.event.metadata.organizationId))
        .map((item) => ({
          accepted: item.event as unknown as MessageAccepted,
          acceptedValue: item.message.value!,
          attempt: 1,
          source: `${item.position.topic}:${item.position.partition}:${item.position.offset}`,
        }));
      await this.runPipeline(jobs);
      // Committed here, chunk by chunk, once the outcomes are appended: a crash or a stop in a large batch
      // leaves only the chunk in hand to be handled again. The last chunk's offsets are not: EventStore.consume
      // commits them with the other partitions' on its timer (config.commitIntervalMs), off the path to the next
      // fetch.
      if (start + this.options.config.chunkSize >= items.length) return;
      const last = chunk.at(-1)!.position;
      await consumer
        .commitOffsets([
          { topic: last.topic, partition: last.partition, offset: (BigInt(last.offset) + 1n).toString() },
        ])
        .catch((error: unknown) =>
          this.log('warn', 'offset commit failed; the chunk will be handled again', { error: String(error) }),
        );
    }
  }

  private async runPipeline(jobs: Parameters<DeliveryPipeline['run']>[0]): Promise<void> {
    if (jobs.length === 0) return;
    const report = await this.pipeline.run(jobs);
    this.stats.runs++;
    this.stats.messages += report.messages;
    this.stats.transactions += report.transactions;
    this.stats.duplicates += report.duplicates;
    for (const [kind, count] of Object.entries(report.outcomes)) {
      this.stats.outcomes[kind as keyof RunReport['outcomes']] += count;
    }
  }

  /** Graceful stop (see the class note). */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const stopped = Promise.all([this.main?.stop(), this.retries?.stop()]);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.options.config.shutdownTimeoutMs);
    });
    const result = await Promise.race([stopped.then(() => 'stopped' as const), timeout]);
    clearTimeout(timer);
    if (result === 'timeout') {
      this.log('warn', 'stop timed out; work in hand is handed back uncommitted', {
        timeoutMs: this.options.config.shutdownTimeoutMs,
      });
    }
    this.delivery.close();
    this.guardRedis.disconnect();
    this.log('info', 'sender stopped', { ...this.stats });
  }
}
