import { MESSAGE_RETENTION_DAYS } from '../../kafka/topics';
import { sqlIdentifier, sqlString, type ClickHouseClient } from '../../clickhouse/client';
import { utcDay } from './rows';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The tables of the activity store that are partitioned by day. */
export const ACTIVITY_TABLES = [
  'messages',
  'message_events',
  'dead_letters',
  'inbound_messages',
  'inbound_bypasses',
] as const;

export interface DroppedPartition {
  table: string;
  /** The day, `YYYY-MM-DD`. */
  partition: string;
}

/**
 * The retention sweep: drops the day partitions of `messages`, `message_events` and `dead_letters`
 * whose whole day is older than `retentionDays` at `now` (epoch ms), i.e. every day
 * before the UTC day of `now - retentionDays`. A message is kept at least
 * `retentionDays` and at most one day more; a partition drop is instant and leaves
 * nothing to merge. Returns what it dropped.
 */
export async function dropExpiredPartitions(
  client: ClickHouseClient,
  database: string,
  now: number,
  retentionDays: number = MESSAGE_RETENTION_DAYS,
): Promise<DroppedPartition[]> {
  const db = sqlIdentifier(database);
  const cutoff = utcDay(now - retentionDays * DAY_MS);
  const parts = await (
    await client.query({
      query:
        `SELECT DISTINCT table, partition FROM system.parts WHERE database = ${sqlString(database)} ` +
        `AND table IN (${ACTIVITY_TABLES.map((t) => sqlString(t)).join(', ')}) AND active ORDER BY table, partition`,
      format: 'JSONEachRow',
    })
  ).json<{ table: string; partition: string }>();
  const dropped: DroppedPartition[] = [];
  for (const part of parts) {
    // A Date partition reads as 2026-10-21 (or '2026-10-21' on some versions).
    const day = part.partition.replace(/'/g, '');
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || day >= cutoff) continue;
    await client.command({ query: `ALTER TABLE ${db}.${sqlIdentifier(part.table)} DROP PARTITION ${sqlString(day)}` });
    dropped.push({ table: part.table, partition: day });
  }
  return dropped;
}
