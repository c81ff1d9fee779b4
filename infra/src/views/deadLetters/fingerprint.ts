import type { ClickHouseClient } from '../../clickhouse/client';
import type { OrganizationFingerprint } from '../rebuildable';

/** The dead letters' fingerprint per organization: how many, and a checksum of what the console shows. */
export async function deadLetterFingerprints(
  client: ClickHouseClient,
  db: string,
): Promise<Map<string, OrganizationFingerprint>> {
  const rows = await (
    await client.query({
      query:
        `SELECT organization_id, count() AS rows, toString(groupBitXor(cityHash64(dead_at_ms, dead_letter_topic, ` +
        `dead_letter_partition, dead_letter_offset, source_topic, consumer_group, event_type, event_id, message_id, ` +
        `subject, error, error_code, attempts))) AS checksum FROM ${db}.dead_letters FINAL GROUP BY organization_id`,
      format: 'JSONEachRow',
    })
  ).json<{ organization_id: string; rows: string; checksum: string }>();
  return new Map(
    rows.map((row) => [
      row.organization_id,
      {
        organizationId: row.organization_id,
        count: Number(row.rows),
        checksum: BigInt(row.checksum).toString(16),
        counts: { deadLetters: Number(row.rows) },
      },
    ]),
  );
}
