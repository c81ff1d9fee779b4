import { sqlIdentifier, type ClickHouseClient } from '../../clickhouse/client';
import { migrate } from '../../clickhouse/migrations';
import type { RebuildableView } from '../rebuildable';
import { deadLettersHandler } from './apply';
import { deadLetterFingerprints } from './fingerprint';

/**
 * The dead letters rebuilt from the dead-letter topics into a fresh database (`<database>_replay_<id>`, created by
 * the migrations) and swapped in with one RENAME TABLE, as the activity store's replay does.
 */
export function rebuildDeadLetters(client: ClickHouseClient, database: string, id: string): RebuildableView {
  const live = sqlIdentifier(database);
  const rebuilt = sqlIdentifier(`${database}_dead_letters_replay_${id}`);
  const intoRebuilt = deadLettersHandler(client, rebuilt);
  const intoLive = deadLettersHandler(client, database);
  const drop = () => client.command({ query: `DROP DATABASE IF EXISTS ${rebuilt}` });
  return {
    live,
    rebuilt,
    prepare: async () => {
      await drop();
      await migrate(client, rebuilt);
    },
    apply: intoRebuilt,
    settle: async () => undefined,
    fingerprints: async () => {
      const [a, b] = await Promise.all([deadLetterFingerprints(client, live), deadLetterFingerprints(client, rebuilt)]);
      return { live: a, rebuilt: b };
    },
    swap: async () => {
      await client.command({
        query:
          `RENAME TABLE ${live}.dead_letters TO ${rebuilt}.dead_letters_previous, ` +
          `${rebuilt}.dead_letters TO ${live}.dead_letters`,
      });
    },
    applyToLive: intoLive,
    settleLive: async () => undefined,
    discard: async () => {
      await drop();
    },
    retire: async (keep) => {
      if (keep) return `${rebuilt}.dead_letters_previous`;
      await drop();
      return undefined;
    },
  };
}
