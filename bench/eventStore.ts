/**
 * npm run bench:events — the event store's append throughput against the raw
 * kafkajs producer sending the same bytes, in the same run, on fresh topics; and
 * the Avro encode/decode cost per event. Bounded: a fixed number of events per case.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Partitioners } from 'kafkajs';
import { EventStore, loadLocalServicesEnv, serviceAddresses, topicConfigs, type StoredEvent } from '@sendline/infra';
import { benchTopics } from './support';

loadLocalServicesEnv();
const addresses = serviceAddresses();
const run = randomUUID().slice(0, 8);
const topics = benchTopics(run);
const store = new EventStore({
  brokers: addresses.kafkaBrokers,
  registryUrl: addresses.schemaRegistryUrl,
  clientId: 'bench',
  topics,
});
await store.ensureTopics(topicConfigs(topics, 6));

function accepted(bodyBytes: number): StoredEvent {
  const messageId = randomUUID();
  return {
    type: 'MessageAccepted',
    data: {
      messageId,
      from: { email: 'bench@example.test', name: 'Bench' },
      to: [{ email: 'r@example.net' }],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: 'Your receipt',
      textBody: 'x'.repeat(bodyBytes),
      headers: [],
      metadata: {},
      attachments: [],
      trackOpens: false,
      trackLinks: 'None',
      messageStream: 'outbound',
      sizeBytes: bodyBytes,
      activeRecipients: ['r@example.net'],
      suppressedRecipients: [],
      submittedAt: Date.now(),
    },
    metadata: { eventId: randomUUID(), organizationId: randomUUID(), occurredAt: Date.now(), schemaVersion: 1 },
  };
}

interface Case {
  name: string;
  count: number;
  bodyBytes: number;
  perAppend: number;
  concurrency: number;
}
const cases: Case[] = [
  { name: 'small events (~0.5 KB), batches of 100', count: 50_000, bodyBytes: 200, perAppend: 100, concurrency: 4 },
  {
    name: 'small events (~0.5 KB), single appends, 64 concurrent',
    count: 20_000,
    bodyBytes: 200,
    perAppend: 1,
    concurrency: 64,
  },
  { name: '100 KB events, batches of 10', count: 2_000, bodyBytes: 100_000, perAppend: 10, concurrency: 2 },
];

async function inParallel(total: number, concurrency: number, step: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await step(next++);
    }),
  );
}

const rows = [];
const producer = store.kafka.producer({
  idempotent: true,
  maxInFlightRequests: 1,
  createPartitioner: Partitioners.DefaultPartitioner,
});
await producer.connect();
for (const c of cases) {
  const batches = Array.from({ length: c.count / c.perAppend }, () =>
    Array.from({ length: c.perAppend }, () => accepted(c.bodyBytes)),
  );
  // Encode once for the raw producer, so it sends exactly the bytes the store sends.
  const encoded: Buffer[][] = [];
  const encodeStart = performance.now();
  for (const batch of batches)
    encoded.push(await Promise.all(batch.map((e) => store.codec.encode(topics.messages, e))));
  const encodeMs = performance.now() - encodeStart;
  const decodeStart = performance.now();
  for (const batch of encoded.slice(0, Math.ceil(encoded.length / 4)))
    for (const value of batch) await store.codec.decode(value);
  const decodeMs = performance.now() - decodeStart;
  const decoded = Math.ceil(encoded.length / 4) * c.perAppend;

  let t = performance.now();
  await inParallel(batches.length, c.concurrency, async (i) => store.append(batches[i]!));
  const storeS = (performance.now() - t) / 1000;

  t = performance.now();
  await inParallel(encoded.length, c.concurrency, async (i) => {
    await producer.send({
      topic: topics.messages,
      acks: -1,
      messages: encoded[i]!.map((value, j) => ({
        key: (batches[i]![j]!.data as { messageId: string }).messageId,
        value,
      })),
    });
  });
  const rawS = (performance.now() - t) / 1000;
  rows.push({
    case: c.name,
    'event store events/s': Math.round(c.count / storeS),
    'raw kafkajs events/s': Math.round(c.count / rawS),
    'encode µs/event': Math.round((encodeMs * 1000) / c.count),
    'decode µs/event': Math.round((decodeMs * 1000) / decoded),
  });
}
console.log(`\nbench:events — acks=all, idempotent producer, 6 partitions, loopback, ${new Date().toISOString()}`);
console.table(rows);
await producer.disconnect();
const admin = store.kafka.admin();
await admin.connect();
await admin.deleteTopics({ topics: Object.values(topics) }).catch(() => undefined);
await admin.disconnect();
await store.disconnect();
