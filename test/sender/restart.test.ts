import { randomUUID } from 'node:crypto';
import { secretKeyFromEnv, type TestMailServer } from '@sendline/infra';
import type { Sender, SenderConfig } from '@sendline/sender';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { call } from '../support/http';
import { dataOf, email, EventTap, startMailServer, startTestSender, testSenderConfig, typesOf } from './support';

/** The retry schedule is a topic, not a timer in memory: a deferred delivery survives a restart of the sender. */

let api: TestApi;
let org: TestOrganization;
let mail: TestMailServer;
let tap: EventTap;
let config: SenderConfig;
const running: Sender[] = [];

beforeAll(async () => {
  api = await startTestApi();
  org = await createTestOrganization(api.deps);
  const mine = new Set([org.organizationId]);
  mail = await startMailServer(api.deps.accounts, [org]);
  tap = await EventTap.start(
    api.deps.store,
    [api.deps.store.topics.messages, api.deps.store.topics.deliveryRetries],
    () => mine,
  );
  config = testSenderConfig(
    { host: mail.host, port: mail.port },
    { retryPolicy: { initialDelayMs: 4000, multiplier: 2, maxDelayMs: 8000, giveUpAfterMs: 60_000, jitter: 0 } },
  );
});

afterAll(async () => {
  for (const sender of running) await sender.stop();
  await tap?.stop();
  await mail?.stop();
  await api?.close();
});

describe('a deferred delivery', () => {
  it('is retried by the next sender when the one that deferred it stopped before it was due', async () => {
    const first = await startTestSender(api.deps, [org.organizationId], config, secretKeyFromEnv());
    running.push(first);
    const recipient = `defer1+${randomUUID().slice(0, 8)}@dest.example.net`;
    const response = await call(api.baseUrl, 'POST', '/email', {
      key: org.liveKey,
      body: email(`orders@${org.domain}`, recipient),
    });
    const messageId: string = response.body.MessageID;
    const deferred = await tap.waitForMessage(messageId, (found) =>
      found.some((e) => e.type === 'DeliveryRetryScheduled'),
    );
    const schedule = dataOf(deferred.find((e) => e.type === 'DeliveryRetryScheduled'));
    expect(schedule.dueAt - Date.now()).toBeGreaterThan(1000); // not due yet when the sender stops
    await first.stop();
    running.splice(running.indexOf(first), 1);

    const second = await startTestSender(api.deps, [org.organizationId], config, secretKeyFromEnv());
    running.push(second);
    const events = await tap.waitForMessage(messageId, (found) => found.some((e) => e.type === 'MessageDelivered'));
    const delivered = events.find((e) => e.type === 'MessageDelivered')!;
    expect(delivered.metadata.occurredAt).toBeGreaterThanOrEqual(schedule.dueAt);
    expect(typesOf(events.filter((e) => e.type.startsWith('Message')))).toEqual([
      'MessageAccepted',
      'MessageSent',
      'MessageDeferred',
      'MessageDelivered',
    ]);
    expect(mail.deliveriesTo(recipient)).toBe(1);
  });
});
