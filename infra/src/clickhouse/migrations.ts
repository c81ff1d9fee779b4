import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sqlIdentifier, sqlNumber, sqlString, type ClickHouseClient } from './client';

export const migrationsDirectory = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'clickhouse',
  'migrations',
);

export interface Migration {
  version: number;
  name: string;
  statements: string[];
}

/** An `ALTER TABLE … ADD COLUMN` that failed because the column is there (ClickHouse error 44): done before. */
function columnAddedAlready(statement: string, error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return (
    /^ALTER\s+TABLE\s+\S+\s+ADD\s+COLUMN\s/i.test(statement) && /column with this name already exists/i.test(message)
  );
}

/** Migrations are `NNNN_name.sql` files; statements are separated by `;` at a line's end; `{db}` is the database. */
export function loadMigrations(directory = migrationsDirectory): Migration[] {
  return readdirSync(directory)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      statements: readFileSync(join(directory, file), 'utf8')
        .split(/;\s*$/m)
        .map((statement) =>
          statement
            .split('\n')
            .filter((line) => !line.trim().startsWith('--'))
            .join('\n')
            .trim(),
        )
        .filter(Boolean),
    }));
}

/**
 * Applies the migrations not yet recorded in `{db}.schema_migrations`, in order.
 * Each statement is written to be safe to run again (IF NOT EXISTS), so a crash
 * between a statement and its record only repeats harmless work. ClickHouse 18.16 has
 * no `ADD COLUMN IF NOT EXISTS`: an `ADD COLUMN` refused because the column exists is
 * taken as done.
 */
export async function migrate(
  client: ClickHouseClient,
  database: string,
  migrations = loadMigrations(),
): Promise<number[]> {
  const db = sqlIdentifier(database);
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}` });
  await client.command({
    query: `CREATE TABLE IF NOT EXISTS ${db}.schema_migrations (version UInt32, name String, applied_at DateTime) ENGINE = MergeTree ORDER BY version`,
  });
  const rows = await (
    await client.query({ query: `SELECT version FROM ${db}.schema_migrations`, format: 'JSONEachRow' })
  ).json<{ version: number }>();
  const applied = new Set(rows.map((row) => Number(row.version)));
  const done: number[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    for (const statement of migration.statements) {
      try {
        await client.command({ query: statement.replaceAll('{db}', db) });
      } catch (error) {
        if (!columnAddedAlready(statement, error)) throw error;
      }
    }
    await client.command({
      query: `INSERT INTO ${db}.schema_migrations (version, name, applied_at) VALUES (${sqlNumber(migration.version)}, ${sqlString(migration.name)}, now())`,
    });
    done.push(migration.version);
  }
  return done;
}
