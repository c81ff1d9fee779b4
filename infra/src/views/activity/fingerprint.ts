import { sqlIdentifier, type ClickHouseClient } from '../../clickhouse/client';
import type { OrganizationFingerprint } from '../rebuildable';

/**
 * The activity store's fingerprint per organization: messages (one per message, its
 * latest version) and events (each once), with an order-free checksum (XOR of row
 * hashes) over what the API and analysts see. Where an event was read from (its
 * Kafka partition and offset) is left out.
 */
export async function activityFingerprints(
  client: ClickHouseClient,
  database: string,
): Promise<Map<string, OrganizationFingerprint>> {
  const db = sqlIdentifier(database);
  const query = async <T>(sql: string) => (await client.query({ query: sql, format: 'JSONEachRow' })).json<T>();
  const [messages, events] = await Promise.all([
    query<{ organization_id: string; rows: string; checksum: string }>(
      `SELECT organization_id, count() AS rows, toString(groupBitXor(cityHash64(message_id, status, phase, ` +
        `arrayStringConcat(recipients, ','), arrayStringConcat(recipient_statuses, ','), ` +
        `arrayStringConcat(suppressed_recipients, ','), from_email, from_name, subject, tag, received_at_ms, ` +
        `sent_at_ms, completed_at_ms, version, metadata_json, to_json, cc_json, bcc_json, headers_json, ` +
        `cityHash64(text_body), cityHash64(html_body)))) AS checksum ` +
        `FROM ${db}.messages FINAL GROUP BY organization_id`,
    ),
    query<{ organization_id: string; rows: string; checksum: string }>(
      `SELECT organization_id, count() AS rows, toString(groupBitXor(cityHash64(event_id, message_id, type, ` +
        `recipient, occurred_at_ms, day, smtp_code, smtp_response, destination_server, summary, reason, attempt, ` +
        `report_id, user_agent, return_path))) ` +
        `AS checksum FROM ${db}.message_events FINAL GROUP BY organization_id`,
    ),
  ]);
  const result = new Map<string, OrganizationFingerprint>();
  const entry = (organizationId: string) => {
    let found = result.get(organizationId);
    if (!found) {
      found = { organizationId, count: 0, checksum: '', counts: { messages: 0, events: 0 } };
      result.set(organizationId, found);
    }
    return found;
  };
  const checksums = new Map<string, { messages: string; events: string }>();
  for (const row of messages) {
    const found = entry(row.organization_id);
    found.counts.messages = Number(row.rows);
    checksums.set(row.organization_id, { messages: row.checksum, events: '0' });
  }
  for (const row of events) {
    const found = entry(row.organization_id);
    found.counts.events = Number(row.rows);
    const sums = checksums.get(row.organization_id) ?? { messages: '0', events: '0' };
    sums.events = row.checksum;
    checksums.set(row.organization_id, sums);
  }
  for (const found of result.values()) {
    const sums = checksums.get(found.organizationId)!;
    found.count = (found.counts.messages ?? 0) + (found.counts.events ?? 0);
    found.checksum = `${BigInt(sums.messages).toString(16)}-${BigInt(sums.events).toString(16)}`;
  }
  return result;
}
