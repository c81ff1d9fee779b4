import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageEvent } from '@sendline/domain';
import { ClickHouseActivityReader, ClickHouseActivityWriter, type ClickHouseClient } from '@sendline/infra';
import { accepted, delivered, expectedStatus, freshActivityDatabase, sent } from './support';

/**
 * Two projector copies write the activity store (docs/scaling.md): a message's partition goes from one to the other
 * and back at rebalances. The copy that gets it back must not fold the message's next event into the row it kept in
 * memory from before (the other copy has changed the row since): its consumer makes it forget its rows at every
 * rebalance (`forgetRows`), and the row then shows every outcome whichever copy wrote it.
 */

describe('the activity store written by two projector copies in turn', () => {
  let client: ClickHouseClient;
  let database: string;
  let drop: () => Promise<void>;
  let reader: ClickHouseActivityReader;
  let first: ClickHouseActivityWriter;
  let second: ClickHouseActivityWriter;

  beforeAll(async () => {
    ({ client, database, drop } = await freshActivityDatabase());
    reader = new ClickHouseActivityReader(client, database);
    first = new ClickHouseActivityWriter(client, database, { maxDelayMs: 20 });
    second = new ClickHouseActivityWriter(client, database, { maxDelayMs: 20 });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await drop?.();
  });

  const write = (writer: ClickHouseActivityWriter, events: MessageEvent[]) =>
    writer.write(events.map((event) => ({ event })));

  it('shows every outcome after the message’s partition went to the other copy and back', async () => {
    const org = randomUUID();
    const message = accepted(org, { to: ['ann@example.net', 'bob@example.net'] });
    const events: MessageEvent[] = [message, sent(message)];
    // The first copy holds the partition: the message, in progress, is in its memory.
    await write(first, events);
    // A rebalance gives the partition to the second copy, which records Ann's delivery.
    second.forgetRows();
    const ann = delivered(message, 'ann@example.net');
    await write(second, [ann]);
    events.push(ann);
    // Another gives it back to the first copy, which records Bob's.
    first.forgetRows();
    const bob = delivered(message, 'bob@example.net');
    await write(first, [bob]);
    events.push(bob);

    const details = await reader.details(org, message.data.messageId);
    expect(details?.status).toBe(expectedStatus(events));
    expect(details?.status).toBe('Delivered');
  });
});
