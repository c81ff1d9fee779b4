import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { receivedMailDecider, type MailReceived, type MailReceivedData } from '../../domain/src/received';
import { fromAvroRecord, toAvroRecord } from '../src/avroRecord';
import { schemaOf } from '../src';

/**
 * MailReceived carries the raw bytes of a message our MX received: every byte value comes back as it went in
 * (an Avro `bytes` field), whether the domain handed a Buffer or a plain Uint8Array.
 */

const AT = Date.UTC(2026, 10, 28, 12, 0, 0, 321);
const everyByte = Uint8Array.from({ length: 512 }, (_, i) => i % 256);

function mailReceived(fields: Partial<MailReceivedData> = {}): MailReceived {
  const [event] = receivedMailDecider.decide(
    {
      type: 'RecordMailReceived',
      data: {
        receivedId: '0b8f3c1e-6a0d-4c55-9f0e-2f4f6c1d9a01',
        envelopeFrom: '',
        envelopeTo: ['b.token@bounces.sendline.dev', 'B.Other@bounces.shop.example'],
        remoteAddress: '::ffff:192.0.2.7',
        heloName: 'mx.example.org',
        receivedAt: AT,
        raw: everyByte,
        ...fields,
      },
      metadata: { organizationId: '', now: AT, eventIds: ['e-1'] },
    },
    receivedMailDecider.initialState(),
  );
  return event!;
}

function roundTrip(event: MailReceived) {
  const type = avro.Type.forSchema(schemaOf(event.type) as avro.Schema);
  const decoded = type.fromBuffer(type.toBuffer(toAvroRecord(event))) as Parameters<typeof fromAvroRecord>[1];
  return fromAvroRecord(event.type, decoded) as unknown as MailReceived;
}

describe('the Avro schema of MailReceived', () => {
  it('has the envelope layout', () => {
    expect(schemaOf('MailReceived').fields.map((field) => field.name)).toEqual([
      'eventId',
      'organizationId',
      'occurredAt',
      'schemaVersion',
      'data',
    ]);
  });

  it('carries every byte value of a plain Uint8Array unchanged', () => {
    const back = roundTrip(mailReceived());
    expect(Buffer.from(back.data.raw).equals(Buffer.from(everyByte))).toBe(true);
    expect(back.data.raw).toBeInstanceOf(Uint8Array);
  });

  it('carries a Buffer unchanged, and the rest of the data and metadata as they were', () => {
    const event = mailReceived({ raw: Buffer.from('From: a@b.example\r\n\r\nhé\r\n', 'utf8') });
    const back = roundTrip(event);
    expect({ ...back, data: { ...back.data, raw: Buffer.from(back.data.raw) } }).toStrictEqual({
      ...event,
      data: { ...event.data, raw: Buffer.from(event.data.raw) },
    });
  });

  it('reads an absent message id back as absent, and a present one as it was', () => {
    expect(roundTrip(mailReceived()).data).not.toHaveProperty('messageId');
    const messageId = '5d1f0c7a-1b2c-4d3e-8f90-a1b2c3d4e5f6';
    expect(roundTrip(mailReceived({ messageId })).data.messageId).toBe(messageId);
  });

  it('reads the MX’s inbound mark back, and its absence as absent', () => {
    expect(roundTrip(mailReceived()).data).not.toHaveProperty('inbound');
    expect(roundTrip(mailReceived({ inbound: true })).data.inbound).toBe(true);
  });

  it('carries an empty message (no byte at all)', () => {
    expect(roundTrip(mailReceived({ raw: new Uint8Array(0) })).data.raw.length).toBe(0);
  });
});
