import {
  isPublicAddress,
  WebhookDeliveryLog,
  type EventStore,
  type Redis,
  type RunningConsumer,
  type WebhookDeliveryAttempt,
} from '@sendline/infra';
import type { WebhooksService } from '@sendline/application';
import type { WebhookCallScheduled, WebhookDisabled } from '@sendline/domain';
import { CallAttempts, type DisableFailingWebhook } from './attempts';
import { startCaller, type RunningCaller } from './caller';
import type { WebhooksConfig } from './config';
import { startDispatcher } from './dispatcher';
import { WebhookHttp } from './http';
import { startNotices } from './notices';
import { CachedWebhookDirectory, MessageSummaries, type WebhookDirectory } from './stores';

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
  onAttempt?: (record: WebhookCallScheduled, attempt: WebhookDeliveryAttempt | undefined) => void;
  /** Disables a webhook that failed every call for `config.disableAfterMs`; absent: none is disabled. */
  disable?: DisableFailingWebhook;
  /** Tells the admins of a disabled webhook (the notices consumer runs only with it). */
  notifyDisabled?: (event: WebhookDisabled) => Promise<void>;
  /** The clock: when calls are due, when a failure streak began and how long it lasted. */
  now?: () => number;
}

/**
 * The disabling of failing webhooks through the organization's use case (WebhooksService.disableFailing: the domain
 * decides, the event is appended to the accounts topic and applied to the view), logged when it happens.
 */
export function disablingBy(service: Pick<WebhooksService, 'disableFailing'>, log: Log): DisableFailingWebhook {
  return async (organizationId, webhookId, failure) => {
    const event = await service.disableFailing(organizationId, webhookId, failure);
    if (event) {
      log('warn', 'webhook disabled: every call failed', {
        organizationId,
        webhookId,
        failingSince: new Date(event.data.failingSince).toISOString(),
        reason: event.data.reason,
      });
    }
    return event !== null;
  };
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
    readonly notices: RunningConsumer | undefined,
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
      log: new WebhookDeliveryLog(options.redis),
      http,
      secretKey: options.secretKey,
      retryDelaysMs: config.retryDelaysMs,
      disableAfterMs: config.disableAfterMs,
      onRecordRetry: (callId, error) =>
        log('warn', 'webhook call made, its outcome written again', { callId, error: String(error) }),
      ...(options.disable && { disable: options.disable }),
      ...(options.now && { now: options.now }),
    });
    const caller = await startCaller({
      store,
      groupId: config.callerGroupId,
      retries: config.retryDelaysMs.length,
      setAsideDelayMs: config.retryDelaysMs[0] ?? 0,
      answered: (records) => attempts.answeredAmong(records),
      perform: async (record, answered, called) => {
        const attempt = await attempts.perform(record, answered, called);
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
      ...(options.now && { now: options.now }),
      onError: (error, record) => log('error', 'webhook call', { callId: record?.data.callId, error: String(error) }),
    });
    const dispatcher = await startDispatcher({
      store,
      groupId: config.dispatcherGroupId,
      directory,
      summaries: new MessageSummaries(options.redis),
      startNewGroupAt: config.startNewGroupsAt,
      ...(options.accept && { accept: options.accept }),
      sessionTimeoutMs: config.sessionTimeoutMs,
      ...(options.now && { now: options.now }),
      onError: (error) => log('error', 'webhook dispatch', { error: String(error) }),
    });
    const notify = options.notifyDisabled;
    const notices = notify
      ? await startNotices({
          store,
          groupId: config.noticesGroupId,
          startNewGroupAt: config.startNewGroupsAt,
          sessionTimeoutMs: config.sessionTimeoutMs,
          ...(options.accept && { accept: options.accept }),
          notify: async (event) => {
            await notify(event);
            log('info', 'webhook disabled, admins told', {
              organizationId: event.metadata.organizationId,
              webhookId: event.data.webhookId,
              admins: event.data.notifyAdmins.length,
            });
          },
          onError: (error) => log('error', 'webhook notice', { error: String(error) }),
        })
      : undefined;
    log('info', 'webhooks started', { dispatcherGroup: config.dispatcherGroupId, callerGroup: config.callerGroupId });
    return new Webhooks(dispatcher, caller, http, notices);
  }

  async stop(): Promise<void> {
    await this.notices?.stop();
    await this.dispatcher.stop();
    await this.caller.stop();
    await this.http.close();
  }
}
