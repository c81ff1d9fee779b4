import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageEvent } from '@sendline/domain';
import { ClickHouseActivityWriter, createClickHouse, utcDay, type ClickHouseClient } from '@sendline/infra';
import { addresses } from '../support/services';
import {
  accepted,
  deferred,
  delivered,
  freshActivityDatabase,
  hardBounced,
  policyRejected,
  sent,
  softBounced,
} from './support';

const DAY = 24 * 3600_000;

/** Runs a file of queries/ the way an analyst does: unqualified table names, the activity database as default. */
async function runQuery(client: ClickHouseClient, file: string): Promise<Record<string, unknown>[]> {
  const sql = readFileSync(new URL(`../../queries/${file}`, import.meta.url), 'utf8')
    .trim()
    .replace(/;$/, '');
  return (await client.query({ query: sql, format: 'JSONEachRow' })).json<Record<string, unknown>>();
}

async function storeWith(events: MessageEvent[]) {
  const store = await freshActivityDatabase('test_analytics');
  const writer = new ClickHouseActivityWriter(store.client, store.database, { maxDelayMs: 10 });
  // Everything twice: duplicates must not count twice.
  await writer.write(events.map((event) => ({ event })));
  await writer.write(events.map((event) => ({ event })));
  await writer.close();
  const scoped = createClickHouse(addresses.clickhouseUrl, store.database);
  return {
    query: (file: string) => runQuery(scoped, file),
    drop: async () => {
      await scoped.close();
      await store.drop();
    },
  };
}

describe('the analytics queries in queries/', () => {
  const org = randomUUID();
  const day1 = Date.now() - 2 * DAY;
  const day2 = Date.now() - DAY;
  let store: Awaited<ReturnType<typeof storeWith>>;

  beforeAll(async () => {
    const m1 = accepted(org, { at: day1, to: ['a@x.net', 'b@x.net'], tag: 'receipts' });
    const m2 = accepted(org, { at: day1 + 1, to: ['c@x.net'], tag: 'receipts' });
    const m3 = accepted(org, { at: day1 + 2, to: ['d@x.net'], tag: 'receipts' });
    const m4 = accepted(org, { at: day1 + 3, to: ['e@x.net'], tag: 'receipts' });
    const m5 = accepted(org, { at: day1 + 4, to: ['f@x.net'], tag: 'welcome' });
    const m6 = accepted(org, { at: day2, to: ['g@x.net'], tag: 'receipts' });
    const m7 = accepted(org, { at: day2 + 1, to: ['h@x.net'], tag: 'receipts' });
    const m8 = accepted(org, { at: day2 + 2, to: ['i@x.net', 'j@x.net'], tag: 'welcome' });
    store = await storeWith([
      m1,
      sent(m1),
      delivered(m1, 'a@x.net'),
      hardBounced(m1, 'b@x.net'),
      m2,
      sent(m2),
      delivered(m2, 'c@x.net'),
      m3,
      sent(m3),
      policyRejected(m3, 'd@x.net'),
      m4,
      m5,
      sent(m5),
      deferred(m5, 'f@x.net'),
      delivered(m5, 'f@x.net', m5.data.submittedAt + 5000),
      m6,
      sent(m6),
      softBounced(m6, 'g@x.net'),
      m7,
      sent(m7),
      m8,
      sent(m8),
      hardBounced(m8, 'i@x.net'),
      hardBounced(m8, 'j@x.net'),
    ]);
  });
  afterAll(async () => store.drop());

  it('delivery rate by day and tag', async () => {
    const rows = await store.query('delivery_rate_by_day_and_tag.sql');
    const shaped = rows.map((r) => ({
      day: r.day,
      tag: r.tag,
      recipients: Number(r.recipients),
      delivered: Number(r.delivered),
      bounced: Number(r.bounced),
      rejected: Number(r.rejected),
      in_flight: Number(r.in_flight),
      delivery_rate: Number(r.delivery_rate),
    }));
    expect(shaped).toEqual([
      {
        day: utcDay(day1),
        tag: 'receipts',
        recipients: 5,
        delivered: 2,
        bounced: 1,
        rejected: 1,
        in_flight: 1,
        delivery_rate: 0.5,
      },
      {
        day: utcDay(day1),
        tag: 'welcome',
        recipients: 1,
        delivered: 1,
        bounced: 0,
        rejected: 0,
        in_flight: 0,
        delivery_rate: 1,
      },
      {
        day: utcDay(day2),
        tag: 'receipts',
        recipients: 2,
        delivered: 0,
        bounced: 1,
        rejected: 0,
        in_flight: 1,
        delivery_rate: 0,
      },
      {
        day: utcDay(day2),
        tag: 'welcome',
        recipients: 2,
        delivered: 0,
        bounced: 2,
        rejected: 0,
        in_flight: 0,
        delivery_rate: 0,
      },
    ]);
  });

  it('bounces by reason', async () => {
    const rows = await store.query('bounces_by_reason.sql');
    expect(
      rows.map((r) => ({
        ...r,
        bounces: Number(r.bounces),
        recipients: Number(r.recipients),
        messages: Number(r.messages),
      })),
    ).toEqual([
      {
        bounce_type: 'HardBounced',
        enhanced_status: '5.1.1',
        reason: 'Bad destination mailbox address',
        bounces: 3,
        recipients: 3,
        messages: 2,
      },
      {
        bounce_type: 'SoftBounced',
        enhanced_status: '5.2.2',
        reason: 'Mailbox full',
        bounces: 1,
        recipients: 1,
        messages: 1,
      },
    ]);
  });

  it('time from accepted to delivered, p50 / p90 / p99', async () => {
    const own = randomUUID();
    const events: MessageEvent[] = [];
    // 100 deliveries taking 1..100 seconds, written in a shuffled order.
    const delays = Array.from({ length: 100 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
    const base = Date.now() - 3600_000;
    for (const seconds of delays) {
      const m = accepted(own, { at: base, to: ['p@x.net'] });
      events.push(m, sent(m), delivered(m, 'p@x.net', base + seconds * 1000));
    }
    const percentiles = await storeWith(events);
    try {
      const [row] = await percentiles.query('time_to_delivery_percentiles.sql');
      expect({
        delivered: Number(row!.delivered),
        p50: Number(row!.p50_seconds),
        p90: Number(row!.p90_seconds),
        p99: Number(row!.p99_seconds),
        max: Number(row!.max_seconds),
      }).toEqual({ delivered: 100, p50: 51, p90: 91, p99: 100, max: 100 });
    } finally {
      await percentiles.drop();
    }
  });
});
