/**
 * npx tsx bench/inboundReader.ts [MESSAGES] — the inbound reader's CPU per message, part by part, in this process:
 * bench:inbound's message (~20 KB: a 4 kB one-line text and a 12 kB attachment, nodemailer's composer) read as the
 * reader reads it, without Kafka or Redis, so each part's cost is measured on its own (CPU time: user + system).
 *
 * Parts: the MIME parse (postal-mime), SPF/DKIM/DMARC (mailauth, against a loopback DNS server that knows no name, as
 * bench:inbound's), the Postmark JSON (StrippedTextReply apart), its serialisation, the Avro encoding of the events
 * the reader appends (schemas/avro, as the registry's codec writes them), and then the reader's whole `handle` over
 * batches of BATCH messages with an event store that only encodes (what it costs with all of it together).
 * `node --cpu-prof --import tsx bench/inboundReader.ts` gives the profile of the same.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import avro from 'avsc';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { MailReceivedData, ServerSettings } from '@sendline/domain';
import {
  authenticateInboundMail,
  DEFAULT_INBOUND_DOMAIN,
  inboundHashOf,
  MemoryZone,
  parseInboundMail,
  startDnsServer,
  type ConsumedEvent,
  type EventStore,
  type StoredEvent,
} from '@sendline/infra';
import { schemaOf, toAvroRecord } from '@sendline/schemas';
import { InboundReader } from '../apps/inbound/src/reader';
import { inboundPayloadOf, strippedReply } from '../apps/inbound/src/payload';
import { benchTopics } from './support';

const MESSAGES = Number(process.argv[2] ?? 2000);
const BATCH = 20;

const organizationId = 'bench-reader';
const inboundHash = inboundHashOf(organizationId, randomBytes(32));
const to = `${inboundHash}+bench@${DEFAULT_INBOUND_DOMAIN}`;
const sender = 'customer@sender.example';
const mail = new MailComposer({
  from: sender,
  to,
  subject: 'bench',
  text: 'Thanks for the quick answer. '.repeat(140),
  attachments: [{ filename: 'report.bin', content: randomBytes(12 * 1024) }],
});
const raw = new Uint8Array(await mail.compile().build());
const received = (i: number): MailReceivedData => ({
  receivedId: randomUUID(),
  envelopeFrom: sender,
  envelopeTo: [to],
  remoteAddress: '127.0.0.1',
  heloName: 'mail.sender.example',
  receivedAt: Date.now() + i,
  raw,
});

const types = new Map<string, avro.Type>();
const encode = (event: StoredEvent): Buffer => {
  let type = types.get(event.type);
  if (!type) types.set(event.type, (type = avro.Type.forSchema(schemaOf(event.type) as avro.Schema)));
  const record = toAvroRecord(event as never);
  if (!type.isValid(record)) throw new Error(`${event.type} does not fit its schema`);
  return type.toBuffer(record);
};
let encodedBytes = 0;
const topics = benchTopics('reader');
const store = {
  topics,
  ensureTopics: async () => undefined,
  consume: async () => ({ stop: async () => undefined }),
  append: async (events: StoredEvent[]) => {
    for (const event of events) encodedBytes += encode(event).byteLength;
  },
} as unknown as EventStore;
const settings = { rawEmailEnabled: false, inboundDomain: '' } as unknown as ServerSettings;

const dns = await startDnsServer({ zone: new MemoryZone() });
const mta = 'mx.sendline.test';
const dnsOptions = { servers: [dns.address] };

const cpu = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};
async function measure(name: string, step: (i: number) => unknown): Promise<number> {
  for (let i = 0; i < Math.min(200, MESSAGES); i++) await step(i);
  const before = cpu();
  for (let i = 0; i < MESSAGES; i++) await step(i);
  const ms = (cpu() - before) / MESSAGES;
  console.log(`${name.padEnd(52)} ${ms.toFixed(3)} ms`);
  return ms;
}

try {
  console.log(`inbound reader, CPU ms per message (${MESSAGES} messages of ${raw.byteLength} bytes, each part alone)`);
  const parsed = await parseInboundMail(raw);
  const authentication = await authenticateInboundMail(raw, received(0), { mta, dns: dnsOptions });
  const input = {
    messageId: 'm',
    mail: parsed,
    authentication,
    raw,
    envelopeFrom: sender,
    originalRecipient: to,
    inboundDomain: DEFAULT_INBOUND_DOMAIN,
    rawEmailEnabled: false,
  };
  const payload = inboundPayloadOf(input);
  const body = JSON.stringify(payload);
  console.log(`(the JSON: ${Buffer.byteLength(body)} bytes)`);
  await measure('MIME parse (parseInboundMail)', () => parseInboundMail(raw));
  await measure('SPF, DKIM, DMARC (authenticateInboundMail)', (i) =>
    authenticateInboundMail(raw, received(i), { mta, dns: dnsOptions }),
  );
  await measure('StrippedTextReply (strippedReply)', () => strippedReply(parsed.text));
  await measure('Postmark JSON, StrippedTextReply included', () => inboundPayloadOf(input));
  await measure('JSON.stringify of it', () => JSON.stringify(payload));
  const { reader } = await InboundReader.start({
    store,
    directory: {
      organizationOfInboundHash: async () => organizationId,
      serverSettings: async () => settings,
      inboundRules: async () => [],
    },
    inboundDomain: DEFAULT_INBOUND_DOMAIN,
    mta,
    dns: dnsOptions,
  });
  const itemOf = (i: number) =>
    ({
      event: {
        type: 'MailReceived',
        data: received(i),
        metadata: { eventId: `r${i}`, organizationId: '', occurredAt: Date.now(), schemaVersion: 1 },
      },
    }) as unknown as ConsumedEvent<StoredEvent>;
  await measure('Avro encoding of the MailReceived read (decode ~ same)', (i) => encode(itemOf(i).event));
  encodedBytes = 0;
  let batch: ConsumedEvent<StoredEvent>[] = [];
  const whole = await measure(`the reader's handle, batches of ${BATCH}, encoding included`, async (i) => {
    batch.push(itemOf(i));
    if (batch.length < BATCH) return;
    const items = batch;
    batch = [];
    await reader.handle(items);
  });
  console.log(`(appended ${(encodedBytes / 1024 / (MESSAGES + 200)).toFixed(1)} kB of Avro per message)`);
  console.log(`at most ${(1000 / whole).toFixed(0)} messages a second on one core for these parts`);
} finally {
  await dns.close();
}
process.exit(0);
