import { randomUUID } from 'node:crypto';
import { createClickHouse, loadMigrations, migrate, type ClickHouseClient } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addresses } from '../support/services';

/** The activity store's migrations on the real ClickHouse (18.16 locally: no ADD COLUMN IF NOT EXISTS). */
describe('the ClickHouse migrations', () => {
  let client: ClickHouseClient;
  const databases: string[] = [];
  const fresh = () => {
    const database = `test_migrations_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    databases.push(database);
    return database;
  };
  const columns = async (database: string) =>
    (
      await (
        await client.query({ query: `DESCRIBE TABLE ${database}.message_events`, format: 'JSONEachRow' })
      ).json<{ name: string }>()
    ).map((column) => column.name);

  beforeAll(() => {
    client = createClickHouse(addresses.clickhouseUrl);
  });
  afterAll(async () => {
    for (const database of databases) await client.command({ query: `DROP DATABASE IF EXISTS ${database}` });
    await client.close();
  });

  it('apply once, in order, and a second run applies nothing', async () => {
    const database = fresh();
    const all = loadMigrations().map((migration) => migration.version);
    expect(await migrate(client, database)).toEqual(all);
    expect(await migrate(client, database)).toEqual([]);
    expect(await columns(database)).toEqual(expect.arrayContaining(['report_id', 'user_agent', 'return_path']));
  });

  it('a run that stopped after adding a column but before recording its migration completes on the next run', async () => {
    const database = fresh();
    const before = loadMigrations().filter((migration) => migration.version < 4);
    await migrate(client, database, before);
    // The first statement of 0004 ran, then the process stopped.
    const returned = loadMigrations().find((migration) => migration.version === 4)!;
    await client.command({ query: returned.statements[0]!.replaceAll('{db}', database) });
    const rest = loadMigrations()
      .map((migration) => migration.version)
      .filter((version) => version >= 4);
    expect(await migrate(client, database)).toEqual(rest);
    const names = await columns(database);
    expect(names.filter((name) => name === 'report_id' || name === 'user_agent')).toEqual(['report_id', 'user_agent']);
  });
});
