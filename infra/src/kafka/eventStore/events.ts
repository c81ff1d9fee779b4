import type { KafkaMessage } from 'kafkajs';
import type { EncodableEvent } from '../../registry/codec';
import type { RoutableEvent } from '../routing';

export type StoredEvent = EncodableEvent & RoutableEvent;

/** Where an event was read from. */
export interface EventPosition {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
}

/** An event as a consumer or a reader hands it over; `event` is undefined for a message that could not be decoded. */
export interface ConsumedEvent<E extends StoredEvent | undefined = StoredEvent | undefined> {
  event: E;
  position: EventPosition;
  message: KafkaMessage;
}

export function positionOf(topic: string, partition: number, message: KafkaMessage): EventPosition {
  return { topic, partition, offset: message.offset, key: message.key ? message.key.toString('utf8') : null };
}
