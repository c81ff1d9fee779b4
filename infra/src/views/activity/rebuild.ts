import type { ConsumedEvent, StoredEvent } from '../../kafka/eventStore';
import { sqlIdentifier, sqlString, type ClickHouseClient } from '../../clickhouse/client';
import { migrate } from '../../clickhouse/migrations';
import type { RebuildableView } from '../rebuildable';
import { activityHandler } from './apply';
import { activityFingerprints } from './fingerprint';
import { dropExpiredPartitions } from './retention';
import { ClickHouseActivityWriter } from './writer';

/**
 * The activity store rebuilt into a fresh ClickHouse database (`<database>_replay_<id>`, created by the
 * migrations) and swapped in with one RENAME TABLE; the replaced tables go to the replay's database.
 * `now` is the clock of the retention applied to both copies before they are compared.
 */
export function rebuildActivity(
  client: ClickHouseClient,
  database: string,
  id: string,
  now: () => number = Date.now,
): RebuildableView {
  const live = sqlIdentifier(database);
  const rebuilt = sqlIdentifier(`${database}_replay_${id}`);
  const batch = 50_000;

  /** A writer and its unawaited writes: the replay reads on while a batch is being inserted. */
  const pipeline = (db: string, fresh: boolean) => {
    const writer = new ClickHouseActivityWriter(client, db, {
      maxEvents: batch,
      maxDelayMs: Infinity,
      freshDatabase: fresh,
    });
    const handle = activityHandler(writer);
    let pending: Promise<void>[] = [];
    let failure: unknown;
    return {
      apply: async (items: ConsumedEvent<StoredEvent>[]) => {
        if (failure) throw failure;
        const written = handle(items);
        written.catch((error: unknown) => (failure ??= error));
        pending.push(written);
        await writer.waitForRoom(batch);
      },
      settle: async () => {
        await writer.flush();
        const waiting = pending;
        pending = [];
        await Promise.all(waiting);
      },
    };
  };
  let building: ReturnType<typeof pipeline> | undefined;
  let catchingUp: ReturnType<typeof pipeline> | undefined;

  return {
    live,
    rebuilt,
    prepare: async () => {
      await migrate(client, rebuilt);
      building = pipeline(rebuilt, true);
    },
    apply: (items) => building!.apply(items),
    settle: () => building!.settle(),
    fingerprints: async () => {
      // Both copies as the retention sweep leaves them: the topic keeps 3 days more than the store.
      await dropExpiredPartitions(client, rebuilt, now());
      await dropExpiredPartitions(client, live, now());
      const [a, b] = await Promise.all([activityFingerprints(client, live), activityFingerprints(client, rebuilt)]);
      return { live: a, rebuilt: b };
    },
    swap: async () => {
      await client.command({
        query:
          `RENAME TABLE ${live}.messages TO ${rebuilt}.messages_previous, ${rebuilt}.messages TO ${live}.messages, ` +
          `${live}.message_events TO ${rebuilt}.message_events_previous, ` +
          `${rebuilt}.message_events TO ${live}.message_events`,
      });
      // Tells running projectors to drop the message rows they hold in memory.
      await client.command({
        query: `INSERT INTO ${live}.activity_swaps (swapped_at, replay_id) VALUES (now(), ${sqlString(id)})`,
      });
    },
    applyToLive: (items) => (catchingUp ??= pipeline(live, false)).apply(items),
    settleLive: async () => catchingUp?.settle(),
    discard: async () => {
      await client.command({ query: `DROP DATABASE IF EXISTS ${rebuilt}` });
    },
    retire: async (keep) => {
      if (keep) return `${rebuilt}.messages_previous, ${rebuilt}.message_events_previous`;
      await client.command({ query: `DROP DATABASE IF EXISTS ${rebuilt}` });
      return undefined;
    },
  };
}
