import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Partitioners, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deadLetterTopicOf,
  EventStore,
  ServiceUnavailableError,
  type RunningConsumer,
  type StoredEvent,
} from '@sendline/infra';
import { eventually, freshEventStore, uniqueName } from './support/services';

function memberAdded(organizationId: string, email: string, role = 'developer'): StoredEvent {
  return {
    type: 'MemberAdded',
    data: { email, role },
    metadata: { eventId: randomUUID(), organizationId, occurredAt: Date.now(), schemaVersion: 1 },
  };
}

async function readEverything(store: EventStore, topic: string): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  await store.readAll([topic], async (items) => {
    for (const item of items) if (item.event) events.push(item.event);
  });
  return events;
}

describe('the Kafka event store', () => {
  let store: EventStore;
  const running: RunningConsumer[] = [];
  beforeAll(async () => {
    store = await freshEventStore('event-store-test');
  });
  afterAll(async () => {
    for (const consumer of running) await consumer.stop();
    await store.disconnect();
  });

  it('reads back exactly the events it appended', async () => {
    const org = randomUUID();
    const events = [
      memberAdded(org, 'a@example.com', 'admin'),
      memberAdded(org, 'b@example.com'),
      memberAdded(randomUUID(), 'c@example.com'),
    ];
    await store.append(events);
    const read = await readEverything(store, store.topics.accounts);
    for (const event of events) expect(read).toContainEqual(event);
  });

  it('keeps the order of the events of one key', async () => {
    const org = randomUUID();
    const email = `${uniqueName('order')}@example.com`;
    const events = Array.from({ length: 40 }, (_, i) => memberAdded(org, email, i % 2 ? 'viewer' : 'developer'));
    for (let i = 0; i < events.length; i += 8) await store.append(events.slice(i, i + 8));
    const read = (await readEverything(store, store.topics.accounts)).filter((e) => e.metadata.organizationId === org);
    expect(read.map((e) => e.metadata.eventId)).toEqual(events.map((e) => e.metadata.eventId));
  });

  it('reads a stretch of a partition once, from its start up to its end, and nothing around it', async () => {
    const own = await freshEventStore('read-range-test');
    try {
      const org = randomUUID();
      const events = Array.from({ length: 30 }, (_, i) => memberAdded(org, `range-${i}@example.com`));
      for (let i = 0; i < events.length; i += 10) await own.append(events.slice(i, i + 10));
      const byPartition = new Map<number, { offset: bigint; eventId: string }[]>();
      await own.readAll([own.topics.accounts], async (items) => {
        for (const { position, event } of items) {
          const list = byPartition.get(position.partition) ?? [];
          list.push({ offset: BigInt(position.offset), eventId: event!.metadata.eventId });
          byPartition.set(position.partition, list);
        }
      });
      // The partition holding the most events: a stretch from its third to its second-to-last.
      const [partition, held] = [...byPartition].sort((a, b) => b[1].length - a[1].length)[0]!;
      expect(held.length).toBeGreaterThanOrEqual(5);
      const stretch = held.slice(2, -1);
      const read: string[] = [];
      const handed = await own.readRange(
        new Map([[`${own.topics.accounts}:${partition}`, { from: stretch[0]!.offset, to: held.at(-1)!.offset }]]),
        async (items) => {
          for (const item of items) read.push(item.event.metadata.eventId);
        },
      );
      expect(handed).toBe(stretch.length);
      expect(read).toEqual(stretch.map((e) => e.eventId));
    } finally {
      await own.disconnect();
    }
  });

  it('delivers an event again when the consumer crashed after handling it but before committing', async () => {
    const own = await freshEventStore('crash-test');
    const group = uniqueName('crash-group');
    const event = memberAdded(randomUUID(), 'crash@example.com');
    await own.append([event]);

    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/crashingConsumer.ts'], {
      env: { ...process.env, TEST_TOPICS: JSON.stringify(own.topics), TEST_GROUP: group },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const handled = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the crashing consumer never handled the event')), 45_000);
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (line.startsWith('handled ')) {
          clearTimeout(timer);
          resolve(line.slice('handled '.length));
        }
      });
    });
    expect(handled).toBe(event.metadata.eventId);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));

    const seen: string[] = [];
    running.push(
      await own.consume({
        groupId: group,
        topics: [own.topics.accounts],
        sessionTimeoutMs: 6000,
        retryUnknownErrors: true,
        handle: async ({ event: again }) => {
          seen.push(again.metadata.eventId);
        },
      }),
    );
    await eventually(async () => (seen.length > 0 ? true : undefined), 45_000, 'the event to be delivered again');
    expect(seen).toEqual([event.metadata.eventId]);
    await own.disconnect();
  });

  it('sends an event that keeps failing to the dead-letter topic with the error, and goes on with the next', async () => {
    const org = randomUUID();
    const poison = memberAdded(org, 'poison@example.com');
    const good = memberAdded(org, 'poison@example.com', 'viewer'); // same key, so it waits behind the poison
    await store.append([poison, good]);
    const attempts = new Map<string, number>();
    const handled: string[] = [];
    running.push(
      await store.consume({
        groupId: uniqueName('dlq-group'),
        topics: [store.topics.accounts],
        maxAttempts: 3,
        initialRetryDelayMs: 10,
        // The handler's plain Error declares nothing: retried, up to maxAttempts.
        retryUnknownErrors: true,
        handle: async ({ event }) => {
          if (event.metadata.organizationId !== org) return;
          const n = (attempts.get(event.metadata.eventId) ?? 0) + 1;
          attempts.set(event.metadata.eventId, n);
          if (event.metadata.eventId === poison.metadata.eventId) throw new Error('projector bug: cannot handle this');
          handled.push(event.metadata.eventId);
        },
      }),
    );
    await eventually(async () => (handled.length > 0 ? true : undefined), 30_000, 'the next event to be handled');
    expect(handled).toEqual([good.metadata.eventId]);
    expect(attempts.get(poison.metadata.eventId)).toBe(3);

    const dead = await readDeadLetters(store, deadLetterTopicOf(store.topics.accounts));
    const letter = dead.find((d) => d.eventId === poison.metadata.eventId);
    expect(letter?.error).toContain('projector bug');
    expect(letter?.attempts).toBe('3');
  });

  it('handles an event again, and never dead-letters it, while its handler’s appends go unanswered by Kafka', async () => {
    // The sender's shape: a batch handler, unknown errors never retried. Its MessageSent append failing with "no
    // broker reachable" (may have landed, so declared not retriable) used to dead-letter the message: never sent.
    const org = randomUUID();
    const event = memberAdded(org, 'unanswered@example.com');
    await store.append([event]);
    let calls = 0;
    const handled: string[] = [];
    running.push(
      await store.consume({
        groupId: uniqueName('unanswered-group'),
        topics: [store.topics.accounts],
        retryUnknownErrors: false,
        initialRetryDelayMs: 10,
        handleBatch: async (items) => {
          const ours = items.filter((item) => item.event.metadata.organizationId === org);
          if (ours.length === 0) return;
          if (++calls <= 3) {
            throw new ServiceUnavailableError('kafka', 'no Kafka broker is reachable', { retriable: false });
          }
          handled.push(...ours.map((item) => item.event.metadata.eventId));
        },
      }),
    );
    await eventually(async () => (handled.length > 0 ? true : undefined), 30_000, 'the event to be handled');
    expect(handled).toEqual([event.metadata.eventId]);
    expect(calls).toBe(4);
    const dead = await readDeadLetters(store, deadLetterTopicOf(store.topics.accounts));
    expect(dead.filter((letter) => letter.eventId === event.metadata.eventId)).toEqual([]);
  });

  it('hands a handler only the event types it takes, never decodes the others, and commits past them', async () => {
    const own = await freshEventStore('event-types-test');
    const topic = own.topics.accounts;
    const org = randomUUID();
    const added = [memberAdded(org, 'a@example.com'), memberAdded(org, 'b@example.com')];
    const removed = (email: string): StoredEvent => ({
      type: 'MemberRemoved',
      data: { email },
      metadata: { eventId: randomUUID(), organizationId: org, occurredAt: Date.now(), schemaVersion: 1 },
    });
    await own.append([added[0]!, removed('a@example.com'), added[1]!]);
    // Not an event at all, but headed as a type the handler does not take: never decoded, so never dead-lettered.
    const producer = own.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    await producer.send({
      topic,
      messages: [{ key: org, value: Buffer.from('not avro at all'), headers: { 'event-type': 'MemberRemoved' } }],
    });
    await producer.disconnect();

    const group = uniqueName('event-types-group');
    const handled: string[] = [];
    const consumer = await own.consume({
      groupId: group,
      topics: [topic],
      eventTypes: ['MemberAdded'],
      retryUnknownErrors: true,
      handleBatch: async (items) => {
        handled.push(...items.map((item) => `${item.event.type} ${item.event.metadata.eventId}`));
      },
    });
    const admin = own.kafka.admin();
    await admin.connect();
    try {
      const committedToEnd = async () => {
        const { holding, behind } = await partitionsBehind(admin, topic, group);
        return holding > 0 && behind === 0 ? true : undefined;
      };
      await eventually(committedToEnd, 30_000, 'the group to commit every offset of the topic');
      // (Each member is a key of its own, so the two may be on different partitions: no order between them.)
      expect(handled.sort()).toEqual(added.map((event) => `MemberAdded ${event.metadata.eventId}`).sort());

      // A batch with nothing for the handler is committed too.
      await own.append([removed('b@example.com')]);
      await eventually(committedToEnd, 30_000, 'the group to commit past an event the handler does not take');
      expect(handled).toHaveLength(2);
      expect(await readDeadLetters(own, deadLetterTopicOf(topic))).toEqual([]);
    } finally {
      await admin.disconnect();
      await consumer.stop();
      await own.disconnect();
    }
  });

  it('with a commit interval, commits handled offsets on its timer, not per batch, and at once when it stops', async () => {
    const own = await freshEventStore('commit-interval-test');
    const topic = own.topics.accounts;
    const org = randomUUID();
    const group = uniqueName('commit-interval-group');
    const handled: string[] = [];
    const admin = own.kafka.admin();
    await admin.connect();
    const uncommitted = async () => (await partitionsBehind(admin, topic, group)).behind;
    const start = () =>
      own.consume({
        groupId: group,
        topics: [topic],
        retryUnknownErrors: true,
        commitIntervalMs: 8000,
        handleBatch: async (items) => {
          handled.push(...items.map((item) => item.event.metadata.eventId));
        },
      });
    let consumer = await start();
    try {
      const first = memberAdded(org, 'first@example.com');
      await own.append([first]);
      await eventually(async () => (handled.includes(first.metadata.eventId) ? true : undefined), 30_000, 'handled');
      // Handled, and the next batch may be fetched, but the offset waits for the timer.
      expect(await uncommitted()).toBe(1);
      await eventually(async () => ((await uncommitted()) === 0 ? true : undefined), 30_000, 'the timer’s commit');

      const second = memberAdded(org, 'second@example.com');
      await own.append([second]);
      await eventually(async () => (handled.includes(second.metadata.eventId) ? true : undefined), 30_000, 'handled');
      await consumer.stop();
      // Stopping committed what was handled (the timer stops with the consumer): a restart reads nothing again.
      expect(await uncommitted()).toBe(0);
      const before = handled.length;
      consumer = await start();
      const third = memberAdded(org, 'third@example.com');
      await own.append([third]);
      await eventually(async () => (handled.includes(third.metadata.eventId) ? true : undefined), 30_000, 'handled');
      expect(handled.slice(before)).toEqual([third.metadata.eventId]);
    } finally {
      await consumer.stop();
      await admin.disconnect();
      await own.disconnect();
    }
  });

  it('sends a value that is not an event of ours to the dead-letter topic without calling the handler', async () => {
    const producer = store.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    const key = uniqueName('garbage');
    await producer.send({ topic: store.topics.accounts, messages: [{ key, value: Buffer.from('not avro at all') }] });
    await producer.disconnect();
    let handlerCalls = 0;
    running.push(
      await store.consume({
        groupId: uniqueName('garbage-group'),
        topics: [store.topics.accounts],
        retryUnknownErrors: true,
        handle: async () => {
          handlerCalls++;
        },
      }),
    );
    const letter = await eventually(
      async () => {
        const dead = await readDeadLetters(store, deadLetterTopicOf(store.topics.accounts));
        return dead.find((d) => d.key === key);
      },
      30_000,
      'the dead letter',
    );
    expect(letter.code).toBe('NotConfluentAvro');
    expect(handlerCalls).toBeGreaterThan(0); // the real events around it were still handled
  });
});

interface DeadLetter {
  key: string | null;
  eventId: string | undefined;
  error: string | undefined;
  code: string | undefined;
  attempts: string | undefined;
}

/** Of a topic's partitions holding events, how many there are and how many the group's committed offset is behind. */
async function partitionsBehind(
  admin: Admin,
  topic: string,
  groupId: string,
): Promise<{ holding: number; behind: number }> {
  const ends = (await admin.fetchTopicOffsets(topic)).filter((end) => end.offset !== '0');
  const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
  const behind = ends.filter(
    (end) => committed!.partitions.find((p) => p.partition === end.partition)?.offset !== end.offset,
  );
  return { holding: ends.length, behind: behind.length };
}

async function readDeadLetters(store: EventStore, topic: string): Promise<DeadLetter[]> {
  const consumer = store.kafka.consumer({ groupId: uniqueName('dead-letter-reader') });
  const admin = store.kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const total = offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  const letters: DeadLetter[] = [];
  if (total === 0) return letters;
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ message }) => {
        const header = (name: string) => message.headers?.[name]?.toString();
        letters.push({
          key: message.key?.toString() ?? null,
          eventId: header('event-id'),
          error: header('dead-letter-error'),
          code: header('dead-letter-error-code'),
          attempts: header('dead-letter-attempts'),
        });
        if (letters.length >= total) resolve();
      },
    });
  });
  await consumer.disconnect();
  return letters;
}
