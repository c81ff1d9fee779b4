import { readdirSync } from 'node:fs';
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import {
  MESSAGE_EVENT_TYPES,
  messageDecider,
  type DeliveryOutcome,
  type ReturnedOutcome,
  type MessageCommand,
  type MessageEvent,
  type MessageState,
} from '../../domain/src/messages';
import {
  SUPPRESSION_EVENT_TYPES,
  suppressionDecider,
  type SuppressionCommand,
  type SuppressionEvent,
} from '../../domain/src/suppressions';
import { validateSendRequest, type OutboundMessage } from '../../domain/src/validation';
import { fromAvroRecord, OPTIONAL_FIELD_MARKER, toAvroRecord, type EnvelopedEvent } from '../src/avroRecord';
import { avroDirectory, schemaOf } from '../src';

/**
 * Every message and suppression event type has an Avro schema that carries its events without loss:
 * real events, decided by the deciders from real requests, go through toAvroRecord → encode → decode →
 * fromAvroRecord and come back strictly equal (absent optional fields stay absent).
 */

const ORG = '1b6f2f7e-3c1d-4d0e-9a57-2b8e8f0c5d11';
const OWN_TYPES = [...MESSAGE_EVENT_TYPES, ...SUPPRESSION_EVENT_TYPES];

let clock = Date.UTC(2025, 2, 3, 10, 0, 0, 123);
let ids = 0;
function metadata() {
  clock += 1_000;
  return { organizationId: ORG, now: clock, eventIds: [`event-${++ids}`] };
}

function message(body: Record<string, unknown>): OutboundMessage {
  const result = validateSendRequest(body);
  if (!result.ok) throw new Error(result.error.message);
  return result.message;
}

const fullMessage = message({
  From: 'Shop Billing <billing@shop.example>',
  To: 'Alice <alice@customer.example>, bob@customer.example, carol@customer.example',
  Cc: ['dave@customer.example', 'erin@customer.example'],
  Bcc: 'frank@customer.example, grace@customer.example, heidi@customer.example',
  ReplyTo: 'Support <support@shop.example>',
  Subject: 'Your invoice – März',
  Tag: 'invoice',
  TextBody: 'Hello',
  HtmlBody: '<p>Hello</p>',
  Headers: [{ Name: 'X-Campaign', Value: 'spring' }],
  Metadata: { customerId: 'c-42', plan: 'pro' },
  Attachments: [
    { Name: 'invoice.pdf', Content: 'JVBERi0xLjQ=', ContentType: 'application/pdf' },
    { Name: 'logo.png', Content: 'iVBORw0KGgo=', ContentType: 'image/png', ContentID: 'cid:logo' },
  ],
  TrackOpens: true,
  TrackLinks: 'HtmlOnly',
});

const minimalMessage = message({ From: 'a@shop.example', To: 'z@customer.example', HtmlBody: '<p>x</p>' });

function runMessage(messageId: string, commands: Array<(id: string) => MessageCommand>): MessageEvent[] {
  let state: MessageState = messageDecider.initialState();
  const events: MessageEvent[] = [];
  for (const command of commands) {
    for (const event of messageDecider.decide(command(messageId), state)) {
      events.push(event);
      state = messageDecider.evolve(state, event);
    }
  }
  return events;
}

const accept =
  (outbound: OutboundMessage, suppressed: string[] = []) =>
  (messageId: string): MessageCommand => ({
    type: 'AcceptMessage',
    data: { messageId, message: outbound, suppressedAddresses: new Set(suppressed) },
    metadata: metadata(),
  });
const sent = (messageId: string): MessageCommand => ({ type: 'RecordSent', data: { messageId }, metadata: metadata() });
/** Most outcomes carry the envelope sender of their attempt (returnPath); one of each kind does not, as before. */
const RETURN_PATH = 'b.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@bounces.shop.example';
const outcome =
  (recipient: string, result: DeliveryOutcome, returnPath: string | undefined = RETURN_PATH) =>
  (messageId: string): MessageCommand => ({
    type: 'RecordDeliveryOutcome',
    data: { messageId, recipient, outcome: result, ...(returnPath !== undefined && { returnPath }) },
    metadata: metadata(),
  });
/** What came back after the SMTP conversation (a DSN, an ARF report, an automatic reply), in its received mail. */
const cameBack =
  (recipient: string, result: ReturnedOutcome, reportId: string) =>
  (messageId: string): MessageCommand => ({
    type: 'RecordReturn',
    data: { messageId, recipient, reportId, outcome: result },
    metadata: metadata(),
  });

function sampleEvents(): Array<MessageEvent | SuppressionEvent> {
  const full = runMessage('7d0c8f0e-0b1a-4f55-8c43-3f1e2a9b6c01', [
    accept(fullMessage, ['heidi@customer.example']),
    sent,
    outcome('alice@customer.example', {
      kind: 'Delivered',
      smtpResponse: '250 2.0.0 OK',
      destinationServer: 'mx.customer.example',
    }),
    outcome('bob@customer.example', {
      kind: 'HardBounced',
      smtpResponse: '550 5.1.1 user unknown',
      statusCode: 550,
      enhancedStatus: '5.1.1',
      summary: 'Bad destination mailbox address',
    }),
    outcome('carol@customer.example', {
      kind: 'PolicyRejected',
      smtpResponse: '554 rejected as spam',
      statusCode: 554,
      summary: 'SMTP reply 554',
    }),
    outcome('dave@customer.example', {
      kind: 'Deferred',
      reason: 'response',
      smtpResponse: '451 4.7.1 try later',
      summary: 'Delivery not authorized, message refused',
      attempt: 1,
      nextAttemptAt: clock + 60_000,
    }),
    outcome(
      'erin@customer.example',
      {
        kind: 'Deferred',
        reason: 'timeout',
        summary: 'The receiving server did not answer in time',
        attempt: 1,
        nextAttemptAt: clock + 60_000,
      },
      undefined,
    ),
    outcome('frank@customer.example', {
      kind: 'SoftBounced',
      reason: 'PermanentFailure',
      smtpResponse: '552 5.2.2 Mailbox full',
      summary: 'Mailbox full',
      attempts: 1,
    }),
    outcome(
      'grace@customer.example',
      {
        kind: 'SoftBounced',
        reason: 'RetriesExhausted',
        summary: 'Could not connect to the receiving server: ECONNREFUSED',
        attempts: 19,
      },
      undefined,
    ),
    outcome('dave@customer.example', {
      kind: 'PolicyRejected',
      smtpResponse: '550 5.7.26 unauthenticated',
      statusCode: 550,
      enhancedStatus: '5.7.26',
      summary: 'Multiple authentication checks failed',
    }),
    cameBack('erin@customer.example', { kind: 'DelayReported', summary: 'Delivery delayed' }, 'received-1'),
    cameBack(
      'erin@customer.example',
      {
        kind: 'DelayReported',
        smtpResponse: 'smtp; 451 4.4.7 Delivery time expired',
        enhancedStatus: '4.4.7',
        summary: 'Delivery delayed',
      },
      'received-2',
    ),
    cameBack('alice@customer.example', { kind: 'AutoReplied', summary: 'Out of office' }, 'received-3'),
    cameBack(
      'alice@customer.example',
      { kind: 'SpamComplaint', feedbackType: 'abuse', userAgent: 'ExampleFBL/1.0', summary: 'Reported as spam' },
      'received-4',
    ),
    cameBack(
      'alice@customer.example',
      {
        kind: 'HardBounced',
        smtpResponse: 'smtp; 550 5.1.1 mailbox disabled',
        statusCode: 550,
        enhancedStatus: '5.1.1',
        summary: 'Bad destination mailbox address',
      },
      'received-5',
    ),
    cameBack('erin@customer.example', { kind: 'SoftBounced', summary: 'Mailbox full' }, 'received-6'),
  ]);
  // A complaint without the reporter's software named.
  const complained = runMessage('7d0c8f0e-0b1a-4f55-8c43-3f1e2a9b6c03', [
    accept(minimalMessage),
    sent,
    cameBack('z@customer.example', { kind: 'SpamComplaint', feedbackType: 'abuse', summary: 'Spam' }, 'received-7'),
  ]);
  const minimal = runMessage('7d0c8f0e-0b1a-4f55-8c43-3f1e2a9b6c02', [accept(minimalMessage)]);

  const suppressionCommands: SuppressionCommand[] = [
    {
      type: 'AddSuppression',
      data: { emailAddress: 'bob@customer.example', reason: 'HardBounce', origin: 'Recipient' },
      metadata: metadata(),
    },
    { type: 'DeleteSuppression', data: { emailAddress: 'bob@customer.example' }, metadata: metadata() },
    {
      type: 'AddSuppression',
      data: { emailAddress: 'Bob@Customer.example', reason: 'ManualSuppression', origin: 'Admin' },
      metadata: metadata(),
    },
  ];
  let state = suppressionDecider.initialState();
  const suppressions: SuppressionEvent[] = [];
  for (const command of suppressionCommands) {
    for (const event of suppressionDecider.decide(command, state)) {
      suppressions.push(event);
      state = suppressionDecider.evolve(state, event);
    }
  }
  // The complaint's suppression, on its address's own stream.
  suppressions.push(
    ...suppressionDecider.decide(
      {
        type: 'AddSuppression',
        data: { emailAddress: 'z@customer.example', reason: 'SpamComplaint', origin: 'Recipient' },
        metadata: metadata(),
      },
      suppressionDecider.initialState(),
    ),
  );
  return [...full, ...minimal, ...complained, ...suppressions];
}

const samples = sampleEvents();

function roundTrip(event: EnvelopedEvent) {
  const type = avro.Type.forSchema(schemaOf(event.type) as avro.Schema);
  const record = toAvroRecord(event);
  const valid = type.isValid(record, {
    noUndeclaredFields: true,
    errorHook: (path) => {
      throw new Error(`${event.type}: invalid at ${path.join('.')}`);
    },
  });
  expect(valid).toBe(true);
  const decoded = type.fromBuffer(type.toBuffer(record)) as Parameters<typeof fromAvroRecord>[1];
  return { record, decoded, back: fromAvroRecord(event.type, decoded) };
}

describe('Avro schemas of the message and suppression events', () => {
  it('has one schema file for each of these event types and no other Message*/Suppression* file', () => {
    const files = readdirSync(avroDirectory)
      .filter((file) => /^(Message|Suppression)\w*\.avsc$/.test(file))
      .map((file) => file.replace(/\.avsc$/, ''));
    expect(files.sort()).toEqual([...OWN_TYPES].sort());
  });

  it('has samples of every event type', () => {
    expect(new Set(samples.map((event) => event.type))).toEqual(new Set(OWN_TYPES));
  });

  it.each(OWN_TYPES.map((type) => [type]))('%s has the envelope layout', (type) => {
    const schema = schemaOf(type);
    expect(schema.namespace).toBe('sendline.events');
    expect(schema.fields.map((field) => [field.name, field.type])).toEqual([
      ['eventId', 'string'],
      ['organizationId', 'string'],
      ['occurredAt', { type: 'long', logicalType: 'timestamp-millis' }],
      ['schemaVersion', 'int'],
      ['data', expect.objectContaining({ type: 'record', name: `${type}Data` })],
    ]);
  });

  it.each(samples.map((event) => [`${event.type} ${event.metadata.eventId}`, event] as const))(
    '%s survives toAvroRecord, encode, decode and fromAvroRecord unchanged',
    (_, event) => {
      expect(roundTrip(event).back).toStrictEqual(event);
    },
  );

  it('writes absent optional fields as null and reads them back as absent', () => {
    const event = samples.find(
      (sample) => sample.type === 'MessageSoftBounced' && sample.data.reason === 'RetriesExhausted',
    );
    if (!event) throw new Error('no sample');
    expect(event.data).not.toHaveProperty('smtpResponse');
    const { decoded, back } = roundTrip(event);
    expect(decoded.data).toMatchObject({ smtpResponse: null });
    expect(back.data).not.toHaveProperty('smtpResponse');
  });

  it('writes an optional field set to undefined as null', () => {
    const event: EnvelopedEvent = {
      type: 'MessageDeferred',
      data: {
        messageId: 'm-1',
        recipient: 'a@x.example',
        reason: 'timeout',
        smtpResponse: undefined,
        summary: 'timed out',
        attempt: 1,
        nextAttemptAt: clock,
      },
      metadata: { eventId: 'e-2', organizationId: ORG, occurredAt: clock, schemaVersion: 1 },
    };
    const { record, back } = roundTrip(event);
    expect(record.data).toMatchObject({ smtpResponse: null });
    expect(back.data).not.toHaveProperty('smtpResponse');
  });

  it('marks every nullable field of these schemas as optional, since their domain types use undefined', () => {
    const unmarked: string[] = [];
    const visit = (node: unknown, path: string): void => {
      if (typeof node !== 'object' || node === null) return;
      const record = node as { type?: unknown; fields?: Array<Record<string, unknown>>; items?: unknown };
      for (const field of record.fields ?? []) {
        const type = field.type;
        if (Array.isArray(type) && type.includes('null') && field[OPTIONAL_FIELD_MARKER] !== true) {
          unmarked.push(`${path}.${String(field.name)}`);
        }
        visit(Array.isArray(type) ? type.find((t) => t !== 'null') : type, `${path}.${String(field.name)}`);
      }
      if (record.type === 'array') visit(record.items, path);
    };
    for (const type of OWN_TYPES) visit(schemaOf(type), type);
    expect(unmarked).toEqual([]);
  });

  it('keeps an explicit null of a field not marked optional (an unlimited allowance)', () => {
    const event: EnvelopedEvent = {
      type: 'AllowanceSet',
      data: { messagesPerMonth: null },
      metadata: { eventId: 'e-1', organizationId: ORG, occurredAt: clock, schemaVersion: 1 },
    };
    expect(roundTrip(event).back).toStrictEqual(event);
  });

  it('catches drift: a domain field the schema lacks is refused', () => {
    const accepted = samples.find((sample) => sample.type === 'MessageAccepted');
    if (!accepted) throw new Error('no sample');
    const drifted = { ...accepted, data: { ...accepted.data, priority: 'high' } };
    const type = avro.Type.forSchema(schemaOf('MessageAccepted') as avro.Schema);
    expect(type.isValid(toAvroRecord(drifted), { noUndeclaredFields: true })).toBe(false);
  });
});
