import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { RetentionSweep } from '@sendline/projector';
import {
  ClickHouseActivityReader,
  ClickHouseActivityWriter,
  dropExpiredPartitions,
  MESSAGE_TOPIC_RETENTION_MS,
  topicConfigs,
} from '@sendline/infra';
import { accepted, delivered, freshActivityDatabase, sent } from './support';

const DAY = 24 * 3600_000;

describe('30-day retention of the activity store', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function storeWithMessagesAged(now: number, ages: number[]) {
    const { client, database, drop } = await freshActivityDatabase('test_retention');
    cleanups.push(drop);
    const org = randomUUID();
    const writer = new ClickHouseActivityWriter(client, database, { maxDelayMs: 10 });
    const messages = ages.map((days) => accepted(org, { at: now - days * DAY }));
    await writer.write(
      messages.flatMap((m) => [m, sent(m), delivered(m, 'ann@example.net')]).map((event) => ({ event })),
    );
    await writer.close();
    const reader = new ClickHouseActivityReader(client, database);
    const present = async () =>
      Promise.all(messages.map(async (m) => (await reader.details(org, m.data.messageId)) !== null));
    return { client, database, present };
  }

  it('drops a 31-day-old message with its events and keeps a 29-day-old one', async () => {
    const now = Date.UTC(2026, 10, 22, 9, 30);
    const { client, database, present } = await storeWithMessagesAged(now, [31, 29, 0]);
    expect(await present()).toEqual([true, true, true]);
    const dropped = await dropExpiredPartitions(client, database, now);
    expect(dropped).toEqual([
      { table: 'message_events', partition: '2026-10-22' },
      { table: 'messages', partition: '2026-10-22' },
    ]);
    expect(await present()).toEqual([false, true, true]);
    const left = await (
      await client.query({
        query: `SELECT count() AS n FROM ${database}.message_events WHERE day < '2026-10-23'`,
        format: 'JSONEachRow',
      })
    ).json<{ n: string }>();
    expect(Number(left[0]!.n)).toBe(0);
  });

  it('the projector’s sweep runs at start on its injected clock, and again on schedule', async () => {
    const realNow = Date.now();
    const { client, database, present } = await storeWithMessagesAged(realNow, [20, 10]);
    let clock = realNow;
    const sweep = new RetentionSweep({ client, database, now: () => clock, intervalMs: 100 });
    await sweep.start();
    expect(await present()).toEqual([true, true]);
    // Eleven days later the 20-day-old message is 31 days old; the 10-day-old one is 21.
    clock = realNow + 11 * DAY;
    await new Promise((resolve) => setTimeout(resolve, 400));
    await sweep.stop();
    expect(await present()).toEqual([false, true]);
  });

  it('the message topic keeps events longer than the store keeps activity (a margin for a lagging projector)', () => {
    const messages = topicConfigs().find((config) => config.topic === 'email.messages');
    const retention = Number(messages?.configEntries?.find((entry) => entry.name === 'retention.ms')?.value);
    expect(retention).toBe(MESSAGE_TOPIC_RETENTION_MS);
    expect(retention).toBeGreaterThan(30 * DAY);
  });
});
