import type { ClickHouseClient } from '../../clickhouse/client';
import type { OrganizationFingerprint } from '../rebuildable';

/** The inbound messages' fingerprint per organization: how many messages and bypasses, and a checksum of their rows. */
export async function inboundFingerprints(
  client: ClickHouseClient,
  db: string,
): Promise<Map<string, OrganizationFingerprint>> {
  const read = async (query: string) =>
    (await client.query({ query, format: 'JSONEachRow' })).json<{
      organization_id: string;
      rows: string;
      checksum: string;
    }>();
  const [messages, bypasses] = await Promise.all([
    read(
      `SELECT organization_id, count() AS rows, toString(groupBitXor(cityHash64(received_at_ms, message_id, ` +
        `received_id, status, blocked_reason, from_address, subject, mailbox_hash, original_recipient, size_bytes, ` +
        `payload))) AS checksum FROM ${db}.inbound_messages FINAL GROUP BY organization_id`,
    ),
    read(
      `SELECT organization_id, count() AS rows, toString(groupBitXor(cityHash64(message_id))) AS checksum ` +
        `FROM ${db}.inbound_bypasses FINAL GROUP BY organization_id`,
    ),
  ]);
  const prints = new Map<string, OrganizationFingerprint>();
  for (const row of messages) {
    prints.set(row.organization_id, {
      organizationId: row.organization_id,
      count: Number(row.rows),
      checksum: BigInt(row.checksum).toString(16),
      counts: { inboundMessages: Number(row.rows), bypasses: 0 },
    });
  }
  for (const row of bypasses) {
    const print = prints.get(row.organization_id) ?? {
      organizationId: row.organization_id,
      count: 0,
      checksum: '0',
      counts: { inboundMessages: 0, bypasses: 0 },
    };
    print.count += Number(row.rows);
    print.counts.bypasses = Number(row.rows);
    print.checksum = `${print.checksum}/${BigInt(row.checksum).toString(16)}`;
    prints.set(row.organization_id, print);
  }
  return prints;
}
