import type { EventStore, StoredEvent } from '@sendline/infra';

/** Every event on `topic` whose data matches `predicate` (reads the topic from the beginning). */
export async function eventsWhere(
  store: EventStore,
  topic: string,
  predicate: (event: StoredEvent) => boolean,
): Promise<StoredEvent[]> {
  const found: StoredEvent[] = [];
  await store.readAll([topic], async (items) => {
    for (const item of items) if (item.event && predicate(item.event)) found.push(item.event);
  });
  return found;
}

export function eventsOfMessage(store: EventStore, messageId: string): Promise<StoredEvent[]> {
  return eventsWhere(
    store,
    store.topics.messages,
    (event) => (event.data as { messageId?: string }).messageId === messageId,
  );
}
