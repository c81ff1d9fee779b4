import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createClickHouse, createRedis, sqlIdentifier, sqlString, type StoredEvent } from '@sendline/infra';
import { addresses, eventually, freshEventStore, uniqueName } from './support/services';

describe('the real services answer', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('an Avro event registered in the schema registry goes through Kafka and comes back equal', async () => {
    const store = await freshEventStore('smoke');
    cleanups.push(() => store.disconnect());
    const organizationId = randomUUID();
    const event: StoredEvent = {
      type: 'SuppressionAdded',
      data: {
        emailAddress: 'smoke@example.com',
        reason: 'ManualSuppression',
        origin: 'Customer',
        createdAt: 1_763_000_000_123,
      },
      metadata: { eventId: randomUUID(), organizationId, occurredAt: 1_763_000_000_123, schemaVersion: 1 },
    };
    await store.append([event]);

    const read: StoredEvent[] = [];
    await store.readAll([store.topics.suppressions], async (items) => {
      for (const item of items) if (item.event) read.push(item.event);
    });
    expect(read).toEqual([event]);

    // The schema is in the registry under its TopicRecordNameStrategy subject.
    const subject = `${store.topics.suppressions}-sendline.events.SuppressionAdded`;
    const response = await fetch(
      `${addresses.schemaRegistryUrl}/subjects/${encodeURIComponent(subject)}/versions/latest`,
    );
    expect(response.status).toBe(200);
    expect(JSON.parse(((await response.json()) as { schema: string }).schema).name).toBe('SuppressionAdded');
  });

  it('a row written to ClickHouse is read back', async () => {
    const clickhouse = createClickHouse(addresses.clickhouseUrl);
    const table = sqlIdentifier(`smoke_${randomUUID().replace(/-/g, '')}`);
    cleanups.push(async () => {
      await clickhouse.command({ query: `DROP TABLE IF EXISTS default.${table}` });
      await clickhouse.close();
    });
    await clickhouse.command({
      query: `CREATE TABLE default.${table} (id String, note String) ENGINE = MergeTree ORDER BY id`,
    });
    await clickhouse.insert({
      table: `default.${table}`,
      values: [{ id: 'a', note: "it's \\ fine" }],
      format: 'JSONEachRow',
    });
    const rows = await (
      await clickhouse.query({
        query: `SELECT id, note FROM default.${table} WHERE note = ${sqlString("it's \\ fine")}`,
        format: 'JSONEachRow',
      })
    ).json();
    expect(rows).toEqual([{ id: 'a', note: "it's \\ fine" }]);
  });

  it('a key written to Redis is read back', async () => {
    const redis = createRedis(addresses.redisUrl);
    cleanups.push(() => redis.quit());
    const key = uniqueName('smoke');
    await redis.set(key, 'value', 'EX', 60);
    expect(await eventually(async () => (await redis.get(key)) ?? undefined)).toBe('value');
  });
});
