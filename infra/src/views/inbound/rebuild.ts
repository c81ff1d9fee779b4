import { sqlIdentifier, type ClickHouseClient } from '../../clickhouse/client';
import { migrate } from '../../clickhouse/migrations';
import type { RebuildableView } from '../rebuildable';
import { inboundHandler } from './apply';
import { inboundFingerprints } from './fingerprint';

const TABLES = ['inbound_messages', 'inbound_bypasses'] as const;

/**
 * The inbound messages rebuilt from email.inbound into a fresh database (created by the migrations) and swapped in
 * with one RENAME TABLE, as the dead letters' replay does.
 */
export function rebuildInbound(client: ClickHouseClient, database: string, id: string): RebuildableView {
  const live = sqlIdentifier(database);
  const rebuilt = sqlIdentifier(`${database}_inbound_replay_${id}`);
  const drop = () => client.command({ query: `DROP DATABASE IF EXISTS ${rebuilt}` });
  return {
    live,
    rebuilt,
    prepare: async () => {
      await drop();
      await migrate(client, rebuilt);
    },
    apply: inboundHandler(client, rebuilt),
    settle: async () => undefined,
    fingerprints: async () => {
      const [a, b] = await Promise.all([inboundFingerprints(client, live), inboundFingerprints(client, rebuilt)]);
      return { live: a, rebuilt: b };
    },
    swap: async () => {
      await client.command({
        query: TABLES.flatMap((table) => [
          `${live}.${table} TO ${rebuilt}.${table}_previous`,
          `${rebuilt}.${table} TO ${live}.${table}`,
        ])
          .join(', ')
          .replace(/^/, 'RENAME TABLE '),
      });
    },
    applyToLive: inboundHandler(client, database),
    settleLive: async () => undefined,
    discard: async () => {
      await drop();
    },
    retire: async (keep) => {
      if (keep) return `${rebuilt}.inbound_messages_previous`;
      await drop();
      return undefined;
    },
  };
}
