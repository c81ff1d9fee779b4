import type { KafkaMessage } from 'kafkajs';
import { isOutage } from '../../availability';
import { InfrastructureError } from '../../errors';
import type { EventCodec } from '../../registry/codec';
import { positionOf, type ConsumedEvent, type StoredEvent } from './events';

/** Messages of one partition, as kafkajs fetched them (or the part of them a reader wants). */
export interface MessageBatch {
  topic: string;
  partition: number;
  messages: KafkaMessage[];
}

export interface DecodeBatchOptions {
  codec: Pick<EventCodec, 'decode'>;
  /**
   * A message no handler can ever take (no value, or not an event of ours): a live consumer sends it to the
   * dead-letter topic. Default: passed over (a reader: the live consumer dead-lettered it already).
   */
  onUndecodable?: (message: KafkaMessage, error: unknown) => Promise<void>;
  /**
   * The schema registry is out of reach (`outages` counts the failures in a row for this message): resolve true
   * once it is worth decoding the message again, false to stop decoding the batch there. A good event is never
   * taken for undecodable because of an outage. Default: the error is thrown.
   */
  onOutage?: (error: unknown, outages: number, message: KafkaMessage) => Promise<boolean>;
  /**
   * The event types the reader takes: a message whose `event-type` header names another type is not decoded (its
   * item has no event, its offset is still passed, and it is never taken for undecodable); one without the header
   * is decoded, and passed the same way when its event is of another type. Default: every type.
   */
  types?: ReadonlySet<string>;
}

export interface DecodedBatch {
  /**
   * One per message, in offset order; `event` is undefined for an undecodable one, or one of a type the reader does
   * not take (its offset is still passed).
   */
  items: ConsumedEvent[];
  /** False when `onOutage` stopped decoding: `items` then holds only the messages before that one. */
  complete: boolean;
}

/**
 * Decodes a fetched batch into events, the one way every consumer of the event store does it (the consumer loop,
 * the reader, the sender's retry consumer): registry outages waited out, undecodable messages handed to
 * `onUndecodable`.
 */
export async function decodeBatch(batch: MessageBatch, options: DecodeBatchOptions): Promise<DecodedBatch> {
  const items: ConsumedEvent[] = [];
  for (const message of batch.messages) {
    const position = positionOf(batch.topic, batch.partition, message);
    if (options.types && !takes(options.types, message)) {
      items.push({ event: undefined, position, message });
      continue;
    }
    for (let outages = 0; ; outages++) {
      try {
        if (!message.value) {
          throw new InfrastructureError('EmptyValue', 'the message has no value', { retriable: false });
        }
        const event = (await options.codec.decode(message.value)) as StoredEvent;
        items.push({ event: options.types && !options.types.has(event.type) ? undefined : event, position, message });
      } catch (error) {
        if (isOutage(error)) {
          if (!options.onOutage) throw error;
          if (await options.onOutage(error, outages, message)) continue;
          return { items, complete: false };
        }
        await options.onUndecodable?.(message, error);
        items.push({ event: undefined, position, message });
      }
      break;
    }
  }
  return { items, complete: true };
}

/** Whether a message is of one of `types`, by its `event-type` header (written with every event); true without it. */
function takes(types: ReadonlySet<string>, message: KafkaMessage): boolean {
  const header = message.headers?.['event-type'];
  if (header === undefined) return true;
  const type = (Array.isArray(header) ? header[0] : header)?.toString();
  return type === undefined || types.has(type);
}

/** The items that hold an event (the undecodable ones left out). */
export function decodedEvents(items: ConsumedEvent[]): ConsumedEvent<StoredEvent>[] {
  return items.filter((item): item is ConsumedEvent<StoredEvent> => item.event !== undefined);
}

/** A consumer waiting for a service out of reach tries again after 200 ms, doubling up to this. */
const OUTAGE_MAX_WAIT_MS = 2_000;

/** How long to wait before trying again after the `outages`-th failure in a row for want of a service. */
export function outageDelay(outages: number): number {
  return Math.min(OUTAGE_MAX_WAIT_MS, 200 * 2 ** Math.min(outages, 5));
}
