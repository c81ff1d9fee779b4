import type { InboundMessageBypassed, InboundMessageReceived } from '@sendline/domain';
import type { ClickHouseClient } from '../../clickhouse/client';
import { ActivityTables } from '../activity/tables';
import type { BatchHandler } from '../apply';
import { BYPASS_COLUMNS, bypassRow, INBOUND_COLUMNS, inboundRow } from './rows';

/** Writes a batch of email.inbound to `<database>.inbound_messages` and `inbound_bypasses` (idempotent by their engine). */
export function inboundHandler(client: ClickHouseClient, database: string): BatchHandler {
  const tables = new ActivityTables(client, database);
  return async (items) => {
    const events = items.map((item) => item.event);
    const received = events.filter((e): e is InboundMessageReceived => e?.type === 'InboundMessageReceived');
    const bypassed = events.filter((e): e is InboundMessageBypassed => e?.type === 'InboundMessageBypassed');
    await tables.insert('inbound_messages', received.map(inboundRow), INBOUND_COLUMNS);
    await tables.insert('inbound_bypasses', bypassed.map(bypassRow), BYPASS_COLUMNS);
  };
}
