import { WEBHOOK_DISABLE_AFTER_MS } from '@sendline/domain';
import { wholeNumberSetting } from '@sendline/infra';
import { parseRetryDelays } from './schedule';

/** The webhooks process's settings, from the environment (see `webhooksConfigFromEnv` for the variables). */
export interface WebhooksConfig {
  /** Consumer group of email.messages and email.suppressions (the dispatcher). */
  dispatcherGroupId: string;
  /** Consumer group of the call topics (the caller). */
  callerGroupId: string;
  /** Consumer group of the accounts topic that tells the admins of a disabled webhook. */
  noticesGroupId: string;
  startNewGroupsAt: 'earliest' | 'latest';
  /** Delays between attempts: Postmark's cadence unless overridden (tests use a short one). */
  retryDelaysMs: readonly number[];
  timeoutMs: number;
  maxAnswerBytes: number;
  perEndpointConcurrency: number;
  maxInFlight: number;
  /**
   * Calls waiting for one webhook before its next ones may be set aside on the first retry topic (when they would
   * wait too long at its pace: pool.ts).
   */
  perEndpointQueue: number;
  /** How long a webhook may fail every call before it is disabled: 24 hours. */
  disableAfterMs: number;
  /** Whether private, loopback and other non-public addresses may be called (development only). */
  allowPrivateAddresses: boolean;
  sessionTimeoutMs: number;
}

/**
 * V8 flags of the webhooks process (`npm start` passes them: infra/local/bin/start; run it with them wherever it
 * runs). A larger young generation: every call allocates its record, body, headers, signature, answer and log
 * entry, all dead within milliseconds, and with V8's default the scavenger ran so often that at 2,000 calls/s the
 * process's one thread was busy 95% of the time and the calls queued behind it (`npm run bench:webhooks` at
 * BENCH_RATE=200: event→call p99 1.3 s after the warm-up; 124 ms with this, and 0.47 → 0.38 ms of CPU per call).
 */
export const WEBHOOKS_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];

/**
 * | variable                               | default                            | meaning                                 |
 * |----------------------------------------|------------------------------------|-----------------------------------------|
 * | SENDLINE_WEBHOOKS_GROUP                | webhooks-dispatcher                | the dispatcher's consumer group         |
 * | SENDLINE_WEBHOOKS_CALLER_GROUP         | webhooks-calls                     | the caller's consumer group             |
 * | SENDLINE_WEBHOOKS_START                | earliest; with SENDLINE_DEV=1: latest | where a group with no commits starts |
 * | SENDLINE_WEBHOOK_RETRY_DELAYS_MS       | Postmark's: 1,5,10,10,10,15,30,60,120,360 min | delays between attempts      |
 * | SENDLINE_WEBHOOK_TIMEOUT_MS            | 10000                              | one call, answer included               |
 * | SENDLINE_WEBHOOK_MAX_ANSWER_BYTES      | 65536                              | answer body read at most                |
 * | SENDLINE_WEBHOOK_ENDPOINT_CONCURRENCY  | 8                                  | calls in flight per webhook             |
 * | SENDLINE_WEBHOOK_CONCURRENCY           | 512                                | calls in flight in all                  |
 * | SENDLINE_WEBHOOK_ENDPOINT_QUEUE        | 100                                | calls waiting per webhook before set aside (if slow) |
 * | SENDLINE_WEBHOOK_DISABLE_AFTER_MS      | 86400000 (24 h), at least 1000     | failing every call this long disables   |
 * | SENDLINE_WEBHOOKS_NOTICES_GROUP        | webhooks-notices                   | the admins' notices' consumer group     |
 * | SENDLINE_WEBHOOK_ALLOW_PRIVATE         | 0; with SENDLINE_DEV=1: 1          | call private and loopback addresses     |
 * | SENDLINE_WEBHOOKS_SESSION_TIMEOUT_MS   | 30000                              | consumer session timeout                |
 */
export function webhooksConfigFromEnv(env: NodeJS.ProcessEnv = process.env): WebhooksConfig {
  const dev = env.SENDLINE_DEV === '1';
  const start = env.SENDLINE_WEBHOOKS_START || (dev ? 'latest' : 'earliest');
  if (start !== 'earliest' && start !== 'latest') {
    throw new Error(`SENDLINE_WEBHOOKS_START must be earliest or latest, not ${JSON.stringify(start)}`);
  }
  const allowPrivate = env.SENDLINE_WEBHOOK_ALLOW_PRIVATE ?? (dev ? '1' : '0');
  return {
    dispatcherGroupId: env.SENDLINE_WEBHOOKS_GROUP || 'webhooks-dispatcher',
    callerGroupId: env.SENDLINE_WEBHOOKS_CALLER_GROUP || 'webhooks-calls',
    noticesGroupId: env.SENDLINE_WEBHOOKS_NOTICES_GROUP || 'webhooks-notices',
    startNewGroupsAt: start,
    retryDelaysMs: parseRetryDelays(env.SENDLINE_WEBHOOK_RETRY_DELAYS_MS),
    timeoutMs: wholeNumberSetting(env, 'SENDLINE_WEBHOOK_TIMEOUT_MS', 10_000),
    maxAnswerBytes: wholeNumberSetting(env, 'SENDLINE_WEBHOOK_MAX_ANSWER_BYTES', 64 * 1024),
    perEndpointConcurrency: wholeNumberSetting(env, 'SENDLINE_WEBHOOK_ENDPOINT_CONCURRENCY', 8),
    maxInFlight: wholeNumberSetting(env, 'SENDLINE_WEBHOOK_CONCURRENCY', 512),
    perEndpointQueue: wholeNumberSetting(env, 'SENDLINE_WEBHOOK_ENDPOINT_QUEUE', 100),
    // Below a second a webhook would be disabled by the first retry of its first failure.
    disableAfterMs: wholeNumberSetting(env, 'SENDLINE_WEBHOOK_DISABLE_AFTER_MS', WEBHOOK_DISABLE_AFTER_MS, 1000),
    allowPrivateAddresses: allowPrivate === '1',
    sessionTimeoutMs: wholeNumberSetting(env, 'SENDLINE_WEBHOOKS_SESSION_TIMEOUT_MS', 30_000, 6000),
  };
}
