import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noWebhookTriggers, type WebhookCallScheduled, type WebhookConfig } from '@sendline/domain';
import {
  createRedis,
  encryptSecret,
  WebhookDeliveryLog,
  type EventStore,
  type Redis,
  type WebhookDeliveryAttempt,
} from '@sendline/infra';
import { CallAttempts, OutcomeNotWritten, WebhookHttp } from '@sendline/webhooks';
import { addresses, deleteTopicsAndDisconnect, freshEventStore } from '../support/services';
import { Receiver } from './support';

/**
 * A webhook call made and answered, whose outcome's write to Redis fails (a reply lost or late under load): the
 * outcome is written again, and the call is not made again (a blind retry is a second call to the customer). Only a
 * write that stays impossible for the whole retry schedule leaves the call to be made again once its lease expires,
 * with its Webhook-Id. On the real Redis and a real HTTP receiver; the lost replies are injected into the log.
 */

/** The real delivery log, whose next writes fail before they are made (`failBefore`) or after (`loseReplies`). */
class FaultyLog extends WebhookDeliveryLog {
  failBefore = 0;
  loseReplies = 0;
  override async record(...args: Parameters<WebhookDeliveryLog['record']>): Promise<void> {
    if (this.failBefore > 0) {
      this.failBefore--;
      throw new Error('Command timed out (Redis away)');
    }
    await super.record(...args);
    if (this.loseReplies > 0) {
      this.loseReplies--;
      throw new Error('Command timed out (its reply lost)');
    }
  }
}

const organizationId = `org-outcome-${randomUUID().slice(0, 8)}`;
const secretKey = randomBytes(32);
let redis: Redis;
let store: EventStore;
let receiver: Receiver;
let http: WebhookHttp;
let webhookId = 0;

beforeAll(async () => {
  redis = createRedis(addresses.redisUrl);
  store = await freshEventStore('outcome-writes');
  receiver = await Receiver.start();
  http = new WebhookHttp({ timeoutMs: 5000, maxAnswerBytes: 4096, connectionsPerOrigin: 4 });
});
afterAll(async () => {
  await receiver?.close();
  redis?.disconnect();
  if (store) await deleteTopicsAndDisconnect(store);
});

/** A webhook of its own (so its delivery log holds this test's attempts only), the log, and the call's first record. */
function aCall(log: WebhookDeliveryLog, leaseTtlMs = 10_000) {
  webhookId += 1;
  const triggers = noWebhookTriggers();
  triggers.delivery = { enabled: true };
  const webhook: WebhookConfig = {
    webhookId,
    url: receiver.url,
    messageStream: 'outbound',
    httpAuth: null,
    httpHeaders: [],
    triggers,
    signingSecretSealed: encryptSecret(`whsec_${randomBytes(32).toString('base64')}`, secretKey),
    createdAt: Date.now(),
    updatedAt: Date.now(),
    organizationId,
    enabled: true,
  };
  const attempts = new CallAttempts({
    store,
    directory: { webhooks: async () => [webhook] },
    log,
    http,
    secretKey,
    retryDelaysMs: [60_000],
    disableAfterMs: 24 * 3600_000,
    leaseTtlMs,
  });
  const callId = randomUUID();
  const record: WebhookCallScheduled = {
    type: 'WebhookCallScheduled',
    data: {
      callId,
      webhookId,
      recordType: 'Delivery',
      sourceEventId: randomUUID(),
      body: JSON.stringify({ RecordType: 'Delivery', MessageID: callId }),
      attempt: 1,
      retry: 0,
      firstScheduledAt: Date.now(),
      dueAt: Date.now(),
      manual: false,
    },
    metadata: { eventId: randomUUID(), organizationId, occurredAt: Date.now(), schemaVersion: 1 },
  };
  const callsMade = () => receiver.calls.filter((call) => call.headers['webhook-id'] === callId).length;
  const logged = () => log.attempts(organizationId, webhookId);
  return { attempts, record, callId, callsMade, logged };
}

describe('a made webhook call whose outcome could not be written at once', () => {
  it('is not made again when the write landed and its reply was lost, and is logged once', async () => {
    const log = new FaultyLog(redis);
    log.loseReplies = 1;
    const { attempts, record, callId, callsMade, logged } = aCall(log);
    const attempt = await attempts.perform(record);
    expect(attempt?.status).toBe('Delivered');
    expect(callsMade()).toBe(1);
    expect((await logged()).map((a: WebhookDeliveryAttempt) => a.status)).toEqual(['Delivered']);
    expect(await log.answered(callId)).toBe(true);
    // Read again (a rebalance, a restart): answered, so not made.
    expect(await attempts.perform(record)).toBeUndefined();
    expect(callsMade()).toBe(1);
  });

  it('is not made again when the write failed twice before it was made: it is written on the third try', async () => {
    const log = new FaultyLog(redis);
    log.failBefore = 2;
    const { attempts, record, callId, callsMade, logged } = aCall(log);
    expect((await attempts.perform(record))?.status).toBe('Delivered');
    expect(callsMade()).toBe(1);
    expect((await logged()).map((a) => a.status)).toEqual(['Delivered']);
    expect(await log.answered(callId)).toBe(true);
  });

  it('is made again, with its Webhook-Id, only once its lease expired after every write failed', async () => {
    const log = new FaultyLog(redis);
    log.failBefore = 6; // the first try and the five retries (RECORD_RETRY_DELAYS_MS, some 8 s)
    const { attempts, record, callId, callsMade, logged } = aCall(log, 1000);
    const made = attempts.perform(record);
    await expect(made).rejects.toBeInstanceOf(OutcomeNotWritten);
    expect(callsMade()).toBe(1);
    // Not given back: the lease holds until it expires (renewed no more), so no copy makes the call meanwhile.
    expect(await redis.get(`sl:webhooks:answered:${callId}`)).toMatch(/^calling:/);
    // Then the call is made again (at least once), and this time written.
    expect((await attempts.perform(record))?.status).toBe('Delivered');
    expect(callsMade()).toBe(2);
    expect(new Set(receiver.calls.filter((c) => c.headers['webhook-id'] === callId).map((c) => c.body)).size).toBe(1);
    expect((await logged()).map((a) => a.status)).toEqual(['Delivered']);
  });
});
