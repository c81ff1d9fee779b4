import { randomUUID } from 'node:crypto';
import { positionNewGroup, secretKeyFromEnv, type StoredEvent, type TestMailServer } from '@sendline/infra';
import { type Sender, type SenderConfig } from '@sendline/sender';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TestApi, TestOrganization } from '../support/api';
import { call } from '../support/http';
import { eventually } from '../support/services';
import {
  dataOf,
  email,
  EventTap,
  startTestSender,
  testSenderConfig,
  startSenderStage,
  type SenderStage,
} from './support';

/**
 * A keyed send retried after a 503 whose first attempt did land appends the very same MessageAccepted a second
 * time (same MessageID, same event id, a later offset of the same partition). The sender delivers such a
 * message once: whether both copies come in one fetched batch, or the second comes while the first is still
 * being delivered, or long after.
 */

let api: TestApi;
let org: TestOrganization;
let mail: TestMailServer;
let tap: EventTap;
let stage: SenderStage;
let sender: Sender | undefined;

beforeAll(async () => {
  stage = await startSenderStage();
  ({ api, org, mail, tap } = stage);
});

afterEach(async () => {
  mail.release();
  await sender?.stop();
  sender = undefined;
});

afterAll(async () => {
  await stage?.close();
});

const freshConfig = (): SenderConfig => testSenderConfig({ host: mail.host, port: mail.port });
const start = (config: SenderConfig) => startTestSender(api.deps, [org.organizationId], config, secretKeyFromEnv());

/** A keyed send through the API; its MessageAccepted as appended. */
async function keyedSend(recipient: string): Promise<StoredEvent> {
  const response = await call(api.baseUrl, 'POST', '/email', {
    key: org.liveKey,
    body: email(`orders@${org.domain}`, recipient),
    headers: { 'Idempotency-Key': randomUUID() },
  });
  expect(response.status).toBe(200);
  const events = await tap.waitForMessage(response.body.MessageID, (found) =>
    found.some((e) => e.type === 'MessageAccepted'),
  );
  return events.find((e) => e.type === 'MessageAccepted')!;
}

/** What the message's recipient and its events show once the sender has handled both copies. */
async function settled(accepted: StoredEvent, recipient: string) {
  const messageId = dataOf(accepted).messageId as string;
  await tap.waitForMessage(messageId, (found) => found.some((e) => e.type === 'MessageDelivered'));
  await eventually(async () => ((sender?.stats.duplicates ?? 0) >= 1 ? true : undefined), 30_000, 'the copy handled');
  const all = tap.allEvents((e) => dataOf(e).messageId === messageId);
  return {
    deliveries: mail.deliveriesTo(recipient),
    accepted: all.filter((e) => e.type === 'MessageAccepted').length,
    sentEventIds: new Set(all.filter((e) => e.type === 'MessageSent').map((e) => e.metadata.eventId)).size,
    deliveredEventIds: new Set(all.filter((e) => e.type === 'MessageDelivered').map((e) => e.metadata.eventId)).size,
    duplicatesSkipped: sender!.stats.duplicates,
  };
}

describe('a second MessageAccepted with the same MessageID', () => {
  it('in the same fetched batch as the first: the message is delivered once', async () => {
    const config = freshConfig();
    // The group starts here, before both copies: its first batch holds them both.
    await positionNewGroup(api.deps.store, config.groupId, [api.deps.store.topics.messages], 'latest');
    const recipient = `same-batch-${randomUUID().slice(0, 8)}@example.net`;
    const accepted = await keyedSend(recipient);
    await api.deps.store.append([accepted]);
    sender = await start(config);

    expect(await settled(accepted, recipient)).toEqual({
      deliveries: 1,
      accepted: 2,
      sentEventIds: 1,
      deliveredEventIds: 1,
      duplicatesSkipped: 1,
    });
  });

  it('while the first is still being delivered: the copy waits and is skipped', async () => {
    sender = await start(freshConfig());
    const recipient = `in-flight-${randomUUID().slice(0, 8)}@example.net`;
    // The server holds its answer to RCPT TO: the first copy's transaction is in flight when the copy lands.
    mail.hold((address) => address === recipient);
    const accepted = await keyedSend(recipient);
    await eventually(async () => (mail.heldCount > 0 ? true : undefined), 30_000, 'the first copy in flight');
    await api.deps.store.append([accepted]);
    mail.release();

    expect(await settled(accepted, recipient)).toEqual({
      deliveries: 1,
      accepted: 2,
      sentEventIds: 1,
      deliveredEventIds: 1,
      duplicatesSkipped: 1,
    });
  });

  it('after the first was delivered, or by a sender started again: never a second delivery', async () => {
    const config = freshConfig();
    sender = await start(config);
    const recipient = `later-${randomUUID().slice(0, 8)}@example.net`;
    const accepted = await keyedSend(recipient);
    await tap.waitForMessage(dataOf(accepted).messageId, (found) => found.some((e) => e.type === 'MessageDelivered'));
    // The same deployment, restarted (its ledger in Redis, its group's offsets committed), reads the copy.
    await sender.stop();
    sender = await start(config);
    await api.deps.store.append([accepted]);

    expect(await settled(accepted, recipient)).toEqual({
      deliveries: 1,
      accepted: 2,
      sentEventIds: 1,
      deliveredEventIds: 1,
      duplicatesSkipped: 1,
    });
  });
});
