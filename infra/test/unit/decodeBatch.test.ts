import type { KafkaMessage } from 'kafkajs';
import { describe, expect, it, vi } from 'vitest';
import { decodeBatch, decodedEvents, InfrastructureError, ServiceUnavailableError, type StoredEvent } from '../../src';
import { partitionOf } from '../../src/kafka/eventStore/producer';

const TOPIC = 'email.suppressions';

function message(offset: number, value: string | null): KafkaMessage {
  return {
    key: Buffer.from(`key-${offset}`),
    value: value === null ? null : Buffer.from(value),
    offset: String(offset),
    timestamp: '0',
    attributes: 0,
    headers: {},
  };
}

function event(id: string): StoredEvent {
  return {
    type: 'SuppressionAdded',
    data: { emailAddress: `${id}@example.org` },
    metadata: { eventId: id, organizationId: 'org-1', occurredAt: 0, schemaVersion: 1 },
  };
}

/** A codec that reads `event:<id>` as an event, fails on `garbage`, and is out of reach `outages` times first. */
function fakeCodec(outages = 0) {
  let left = outages;
  return {
    calls: 0,
    async decode(value: Buffer) {
      this.calls++;
      if (left > 0) {
        left--;
        throw new ServiceUnavailableError('registry', 'the schema registry is out of reach', { retriable: true });
      }
      const text = value.toString();
      if (!text.startsWith('event:')) {
        throw new InfrastructureError('NotConfluentAvro', 'not an event of ours', { retriable: false });
      }
      return event(text.slice('event:'.length));
    },
  };
}

const batch = (...messages: KafkaMessage[]) => ({ topic: TOPIC, partition: 2, messages });

describe('decoding a fetched batch', () => {
  it('gives one item per message, in order, with where each was read from', async () => {
    const { items, complete } = await decodeBatch(batch(message(7, 'event:a'), message(8, 'event:b')), {
      codec: fakeCodec(),
    });
    expect(complete).toBe(true);
    expect(items.map((item) => item.event?.metadata.eventId)).toEqual(['a', 'b']);
    expect(items[1]!.position).toEqual({ topic: TOPIC, partition: 2, offset: '8', key: 'key-8' });
  });

  it('hands an undecodable message or one without a value over, and keeps its place with no event', async () => {
    const undecodable: string[] = [];
    const { items } = await decodeBatch(batch(message(1, 'garbage'), message(2, null), message(3, 'event:c')), {
      codec: fakeCodec(),
      onUndecodable: async (m, error) => void undecodable.push(`${m.offset} ${(error as InfrastructureError).code}`),
    });
    expect(undecodable).toEqual(['1 NotConfluentAvro', '2 EmptyValue']);
    expect(items.map((item) => item.position.offset)).toEqual(['1', '2', '3']);
    expect(decodedEvents(items).map((item) => item.event.metadata.eventId)).toEqual(['c']);
  });

  it('waits out a registry outage and decodes the message again: a good event is never taken for undecodable', async () => {
    const codec = fakeCodec(2);
    const waits: number[] = [];
    const { items } = await decodeBatch(batch(message(1, 'event:a')), {
      codec,
      onUndecodable: async () => expect.unreachable('no message is undecodable'),
      onOutage: async (_error, outages) => {
        waits.push(outages);
        return true;
      },
    });
    expect(waits).toEqual([0, 1]);
    expect(codec.calls).toBe(3);
    expect(items.map((item) => item.event?.metadata.eventId)).toEqual(['a']);
  });

  it('stops at the message the outage holds back when told to, with the items before it', async () => {
    const codec = fakeCodec();
    const { items, complete } = await decodeBatch(batch(message(1, 'event:a'), message(2, 'event:b')), {
      codec: {
        decode: async (value: Buffer) => {
          if (value.toString() === 'event:b') {
            throw new ServiceUnavailableError('registry', 'out of reach', { retriable: true });
          }
          return codec.decode(value);
        },
      },
      onOutage: async () => false,
    });
    expect(complete).toBe(false);
    expect(items.map((item) => item.position.offset)).toEqual(['1']);
  });

  it('decodes only the types the reader takes, by the event-type header, and keeps the others’ places', async () => {
    const codec = fakeCodec();
    const headed = (offset: number, value: string, type?: string): KafkaMessage => ({
      ...message(offset, value),
      headers: type === undefined ? {} : { 'event-type': Buffer.from(type) },
    });
    const onUndecodable = async () => expect.unreachable('a message of another type is not decoded at all');
    const { items } = await decodeBatch(
      batch(
        headed(1, 'event:a', 'SuppressionAdded'),
        headed(2, 'garbage', 'SuppressionDeleted'),
        headed(3, 'event:c'),
        headed(4, 'event:d', 'SuppressionDeleted'),
      ),
      { codec, types: new Set(['SuppressionAdded']), onUndecodable },
    );
    expect(items.map((item) => item.position.offset)).toEqual(['1', '2', '3', '4']);
    expect(decodedEvents(items).map((item) => item.event.metadata.eventId)).toEqual(['a', 'c']);
    expect(codec.calls).toBe(2);

    // Without the header, a message is decoded, then passed when its event is of another type.
    const other = await decodeBatch(batch(headed(5, 'event:e')), { codec, types: new Set(['MessageAccepted']) });
    expect(other.items.map((item) => [item.position.offset, item.event])).toEqual([['5', undefined]]);
  });

  it('throws an outage when nobody said how to wait for it', async () => {
    const outcome = decodeBatch(batch(message(1, 'event:a')), { codec: fakeCodec(1) });
    await expect(outcome).rejects.toBeInstanceOf(ServiceUnavailableError);
  });
});

describe('the partition of a key', () => {
  it('is the one Java clients and kafkajs choose: murmur2 of the key, positive, modulo the count', () => {
    for (const key of ['a', 'ab', 'abc', 'message-1', 'org-1:gone@example.org', '01JDX6T3Q4W5E6R7T8Y9U0I1O2']) {
      for (const partitions of [1, 3, 6]) expect(partitionOf(TOPIC, key, partitions)).toBe(murmur2(key, partitions));
    }
  });
});

describe('importing the event store', () => {
  it('changes nothing in the environment (it once set kafkajs’s switch for its partitioner notice)', async () => {
    const saved = process.env.KAFKAJS_NO_PARTITIONER_WARNING;
    delete process.env.KAFKAJS_NO_PARTITIONER_WARNING;
    try {
      const before = { ...process.env };
      vi.resetModules();
      await import('../../src/kafka/eventStore');
      expect(process.env).toEqual(before);
    } finally {
      if (saved !== undefined) process.env.KAFKAJS_NO_PARTITIONER_WARNING = saved;
    }
  });
});

/** Java's murmur2 (Kafka's `Utils.murmur2`), written out independently of kafkajs. */
function murmur2(key: string, partitions: number): number {
  const data = Buffer.from(key);
  const m = 0x5bd1e995;
  let h = (0x9747b28c ^ data.length) | 0;
  const length4 = data.length >> 2;
  for (let i = 0; i < length4; i++) {
    let k = data.readInt32LE(i * 4);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  const rest = data.length & 3;
  const at = length4 * 4;
  if (rest === 3) h ^= data[at + 2]! << 16;
  if (rest >= 2) h ^= data[at + 1]! << 8;
  if (rest >= 1) {
    h ^= data[at]!;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return (h & 0x7fffffff) % partitions;
}
