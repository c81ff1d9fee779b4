import { isPublicAddress, type EventStore, type Redis, type RunningConsumer } from '@sendline/infra';
import { CallAttempts } from './attempts';
import { startCaller, type RunningCaller } from './caller';
import type { WebhookCallScheduled } from './callRecord';
import type { WebhooksConfig } from './config';
import { startDispatcher } from './dispatcher';
import { WebhookHttp } from './http';
import {
  CachedWebhookDirectory,
  DeliveryLog,
  MessageSummaries,
  type DeliveryAttempt,
  type WebhookDirectory,
} from './stores';

export type Log = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export function defaultLog(): Log {
  return (level, message, fields = {}) =>
    process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`);
}

export interface WebhooksOptions {
  store: EventStore;
  redis: Redis;
  /** The accounts view (its `webhooks`). */
  directory: WebhookDirectory;
  secretKey: Buffer;
  config: WebhooksConfig;
  /** Whether an address may be called when private addresses are not allowed; default: public addresses only. */
  addressAllowed?: (address: string) => boolean;
  /** Organizations this process is for (tests on shared topics); default all. */
  accept?: (organizationId: string) => boolean;
  log?: Log;
  /** How long an organization's webhooks are kept in memory (default 1 s): a change takes effect within it. */
  directoryCacheMs?: number;
  /** Told of every settled attempt (benchmarks, tests). */
  onAttempt?: (record: WebhookCallScheduled, attempt: DeliveryAttempt | undefined) => void;
}

/**
 * The webhooks process: the dispatcher (events → call records, dispatcher.ts) and the caller (call records → HTTP
 * calls with retries, caller.ts and attempts.ts), started together.
 */
export class Webhooks {
  private constructor(
    readonly dispatcher: RunningConsumer,
    readonly caller: RunningCaller,
    private readonly http: WebhookHttp,
  ) {}

  static async start(options: WebhooksOptions): Promise<Webhooks> {
    const { store, config } = options;
    const log = options.log ?? defaultLog();
    const directory = new CachedWebhookDirectory(options.directory, options.directoryCacheMs ?? 1000);
    const http = new WebhookHttp({
      timeoutMs: config.timeoutMs,
      maxAnswerBytes: config.maxAnswerBytes,
      // Several webhooks may share an origin: the pool limits each webhook, the agent only what they share.
      connectionsPerOrigin: config.maxInFlight,
      ...(!config.allowPrivateAddresses && {
        addressAllowed: options.addressAllowed ?? isPublicAddress,
      }),
    });
    const attempts = new CallAttempts({
      store,
      directory,
      log: new DeliveryLog(options.redis),
      http,
      secretKey: options.secretKey,
      retryDelaysMs: config.retryDelaysMs,
    });
    const caller = await startCaller({
      store,
      groupId: config.callerGroupId,
      retries: config.retryDelaysMs.length,
      setAsideDelayMs: config.retryDelaysMs[0] ?? 0,
      perform: async (record) => {
        const attempt = await attempts.perform(record);
        if (attempt?.status === 'Failed') {
          log('warn', 'webhook call given up', {
            callId: attempt.callId,
            webhookId: attempt.webhookId,
            error: attempt.error,
          });
        }
        options.onAttempt?.(record, attempt);
      },
      ...(options.accept && {
        accept: (record: WebhookCallScheduled) => options.accept!(record.metadata.organizationId),
      }),
      startNewGroupAt: config.startNewGroupsAt,
      sessionTimeoutMs: config.sessionTimeoutMs,
      perEndpointConcurrency: config.perEndpointConcurrency,
      maxInFlight: config.maxInFlight,
      perEndpointQueue: config.perEndpointQueue,
      onError: (error) => log('error', 'webhook call', { error: String(error) }),
    });
    const dispatcher = await startDispatcher({
      store,
      groupId: config.dispatcherGroupId,
      directory,
      summaries: new MessageSummaries(options.redis),
      startNewGroupAt: config.startNewGroupsAt,
      ...(options.accept && { accept: options.accept }),
      sessionTimeoutMs: config.sessionTimeoutMs,
      onError: (error) => log('error', 'webhook dispatch', { error: String(error) }),
    });
    log('info', 'webhooks started', { dispatcherGroup: config.dispatcherGroupId, callerGroup: config.callerGroupId });
    return new Webhooks(dispatcher, caller, http);
  }

  async stop(): Promise<void> {
    await this.dispatcher.stop();
    await this.caller.stop();
    await this.http.close();
  }
}
