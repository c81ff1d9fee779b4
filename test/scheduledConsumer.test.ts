import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadLetterTopicOf, type EventStore, type RunningScheduledConsumer } from '@sendline/infra';
import { isDeliveryRetryScheduled, type DeliveryRetryScheduled } from '@sendline/sender';
import { eventually, freshEventStore, uniqueName } from './support/services';

/** The event store's due-time consumer (infra/src/kafka/eventStore/scheduled.ts), on a fresh topic and group each. */

function retryRecord(dueAt: number, messageId = randomUUID()): DeliveryRetryScheduled {
  return {
    type: 'DeliveryRetryScheduled',
    data: {
      messageId,
      recipients: ['a@x.example'],
      attempt: 1,
      firstAttemptAt: Date.now(),
      dueAt,
      acceptedEvent: Buffer.from('accepted').toString('base64'),
    },
    metadata: { eventId: randomUUID(), organizationId: randomUUID(), occurredAt: Date.now(), schemaVersion: 1 },
  };
}

async function deadLetterCount(store: EventStore, topic: string): Promise<number> {
  let count = 0;
  await store.readAll([deadLetterTopicOf(topic)], async (items) => {
    count += items.length;
  });
  return count;
}

describe('the due-time consumer', () => {
  let store: EventStore;
  const running: RunningScheduledConsumer[] = [];
  beforeAll(async () => {
    store = await freshEventStore('scheduled-consumer-test');
  });
  afterAll(async () => {
    for (const consumer of running) await consumer.stop();
    await store.disconnect();
  });

  describe('settling in the batch', () => {
    it('hands a record over only once it is due', async () => {
      const dueAt = Date.now() + 3000;
      const handledAt = new Map<string, number>();
      running.push(
        await store.consumeScheduled<DeliveryRetryScheduled>({
          settle: 'in-batch',
          groupId: uniqueName('scheduled-due'),
          topics: [store.topics.deliveryRetries],
          isRecord: isDeliveryRetryScheduled,
          keyOf: (record) => record.data.messageId,
          handle: async (record) => void handledAt.set(record.data.messageId, Date.now()),
          startNewGroupAt: 'earliest',
          sessionTimeoutMs: 10_000,
          maxWaitTimeInMs: 500,
        }),
      );
      const record = retryRecord(dueAt);
      await store.append([record]);
      const at = await eventually(async () => handledAt.get(record.data.messageId));
      expect(at).toBeGreaterThanOrEqual(dueAt);
    });

    it('dead-letters a record whose handling failed with an error that does not say it is retriable, once', async () => {
      const own = await freshEventStore('scheduled-dead-letter-test');
      const attempts: string[] = [];
      const failing = retryRecord(Date.now());
      const next = retryRecord(Date.now());
      try {
        running.push(
          await own.consumeScheduled<DeliveryRetryScheduled>({
            settle: 'in-batch',
            groupId: uniqueName('scheduled-dead'),
            topics: [own.topics.deliveryRetries],
            isRecord: isDeliveryRetryScheduled,
            keyOf: () => 'one key',
            handle: async (record) => {
              attempts.push(record.data.messageId);
              if (record.data.messageId === failing.data.messageId) throw new Error('unknown failure');
            },
            startNewGroupAt: 'earliest',
            sessionTimeoutMs: 10_000,
            maxWaitTimeInMs: 500,
          }),
        );
        await own.append([failing, next]);
        await eventually(async () => (attempts.includes(next.data.messageId) ? true : undefined));
        await eventually(async () => (await deadLetterCount(own, own.topics.deliveryRetries)) === 1 || undefined);
        expect(attempts.filter((id) => id === failing.data.messageId)).toHaveLength(1);
      } finally {
        await own.disconnect();
      }
    });
  });

  describe('handing off', () => {
    it('commits a record only once its taker settled it', async () => {
      const groupId = uniqueName('scheduled-handed-off');
      const settles: (() => void)[] = [];
      const taken: string[] = [];
      const start = (take: (record: DeliveryRetryScheduled, settle: () => void) => void) =>
        store.consumeScheduled<DeliveryRetryScheduled>({
          settle: 'handed-off',
          groupId,
          topics: [store.topics.deliveryRetries],
          isRecord: isDeliveryRetryScheduled,
          accept: (record) => record.data.recipients[0] === 'handed@x.example',
          startNewGroupAt: 'earliest',
          sessionTimeoutMs: 10_000,
          maxWaitTimeInMs: 100,
          busy: () => false,
          freed: () => new Promise(() => undefined),
          drain: async () => undefined,
          begin: async () => ({ take, end: async () => undefined }),
        });
      const settled = retryRecord(Date.now());
      const unsettled = retryRecord(Date.now());
      for (const record of [settled, unsettled]) record.data.recipients = ['handed@x.example'];
      // One key: one partition, in order.
      unsettled.data.messageId = settled.data.messageId;
      const first = await start((record, settle) => {
        taken.push(record.metadata.eventId);
        settles.push(settle);
      });
      await store.append([settled, unsettled]);
      await eventually(async () => (taken.length === 2 ? true : undefined));
      settles[0]!();
      await first.stop();

      const again: string[] = [];
      running.push(await start((record) => void again.push(record.metadata.eventId)));
      await eventually(async () => (again.length > 0 ? true : undefined));
      expect(again).toEqual([unsettled.metadata.eventId]);
    });
  });
});
