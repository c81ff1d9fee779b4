/**
 * npm run bench:machine — what one step of the send path costs in CPU on this machine, each alone, so that
 * the other benchmarks' figures can be read against a budget: a timer wake-up, a Redis round trip, a
 * one-event Kafka append (acks=all), composing a message, DKIM-signing it (RSA-2048: our signer, and nodemailer's
 * streaming one for comparison) and the RSA signature alone. CPU is the process's user + system time (process.cpuUsage), per operation, taken
 * one operation at a time with a 5 ms pause between (as a quiet API or sender sees them), then, where it
 * applies, 64 at once. Loopback only, on fresh topics; about 20 seconds.
 */
import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import {
  composeMessage,
  createRedis,
  dkimSigningKey,
  EventStore,
  loadLocalServicesEnv,
  serviceAddresses,
  signMessage,
  topicConfigs,
  type StoredEvent,
} from '@sendline/infra';
import DKIM from 'nodemailer/lib/dkim';
import { benchTopics } from './support';

loadLocalServicesEnv();
const addresses = serviceAddresses();
const run = randomUUID().slice(0, 8);
const topics = benchTopics(run);
const redis = createRedis(addresses.redisUrl);
const store = new EventStore({
  brokers: addresses.kafkaBrokers,
  registryUrl: addresses.schemaRegistryUrl,
  clientId: 'bench-machine',
  topics,
});
await store.ensureTopics(topicConfigs(topics, 6));

const suppressionDeleted = (): StoredEvent =>
  ({
    type: 'SuppressionDeleted',
    data: { emailAddress: `${randomUUID()}@example.net`, origin: 'Customer', messageStream: 'outbound' },
    metadata: { eventId: randomUUID(), organizationId: 'bench-org', occurredAt: Date.now(), schemaVersion: 1 },
  }) as unknown as StoredEvent;

const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const key = dkimSigningKey('example.com', 'bench', privateKey);
const message = {
  messageId: randomUUID(),
  from: { email: 'orders@example.com', name: 'Shop' },
  to: [{ email: 'ann@example.net' }],
  cc: [],
  bcc: [],
  replyTo: [],
  subject: 'Your receipt',
  submittedAt: Date.now(),
  headers: [],
  textBody: 'Thank you for your order. '.repeat(8),
  attachments: [],
} as unknown as Parameters<typeof composeMessage>[0];
const composed = await composeMessage(message);
/** nodemailer's DKIM signer (four streams, three event-loop turns a message): what signMessage replaced. */
const nodemailerSigned = async (raw: Buffer): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  const signer = new DKIM({ domainName: key.domainName, keySelector: key.keySelector, privateKey: key.privateKey });
  for await (const chunk of signer.sign(raw)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
const rows: Record<string, string | number>[] = [];

/** CPU and wall time per operation: `count` operations one after another, each followed by a 5 ms pause. */
async function quiet(name: string, operation: () => Promise<unknown> | unknown, count: number): Promise<number> {
  for (let i = 0; i < Math.min(50, count); i++) await operation();
  const cpu = process.cpuUsage();
  let wall = 0;
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await operation();
    wall += performance.now() - started;
    await pause();
  }
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000 / count;
  rows.push({
    operation: name,
    mode: 'one at a time',
    'CPU ms/op': cpuMs.toFixed(3),
    'wall ms/op': (wall / count).toFixed(3),
  });
  return cpuMs;
}

/** CPU per operation with `parallel` operations in flight at once (what a busy process sees). */
async function busy(name: string, operation: () => Promise<unknown>, count: number, parallel = 64): Promise<void> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next++ < count) await operation();
    }),
  );
  const used = process.cpuUsage(cpu);
  rows.push({
    operation: name,
    mode: `${parallel} at once`,
    'CPU ms/op': ((used.user + used.system) / 1000 / count).toFixed(3),
    'wall ms/op': ((performance.now() - started) / count).toFixed(3),
  });
}

try {
  const wakeUp = await quiet('timer wake-up (the 5 ms pause alone)', () => undefined, 400);
  await quiet('Redis GET round trip', () => redis.get(`sl:bench:${run}`), 400);
  await busy('Redis GET round trip', () => redis.get(`sl:bench:${run}`), 20_000);
  await quiet('Kafka append, one event, acks=all', () => store.append([suppressionDeleted()]), 300);
  await busy('Kafka append, one event, acks=all', () => store.append([suppressionDeleted()]), 5_000);
  await quiet('compose a message (nodemailer’s MIME tree, written at once)', () => composeMessage(message), 400);
  await quiet('DKIM-sign it (RSA-2048, relaxed/relaxed)', () => signMessage(composed, key), 400);
  await quiet('DKIM-sign it with nodemailer’s streaming signer', () => nodemailerSigned(composed), 400);
  await quiet(
    'RSA-2048 signature alone',
    () => sign('sha256', createHash('sha256').update(composed).digest(), key.privateKey),
    400,
  );
  console.log(`\nbench:machine — CPU per operation on this machine (${new Date().toISOString()})`);
  console.table(rows);
  console.log(
    `"one at a time" rows include the pause's wake-up (${wakeUp.toFixed(3)} ms CPU here): every quiet round trip pays it.`,
  );
} finally {
  const admin = store.kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: Object.values(topics) }).catch(() => undefined);
  await admin.disconnect();
  await store.disconnect();
  redis.disconnect();
}
process.exit(0);
