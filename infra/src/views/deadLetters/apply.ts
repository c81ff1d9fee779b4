import type { ClickHouseClient } from '../../clickhouse/client';
import type { BatchHandler } from '../apply';
import { ActivityTables } from '../activity/tables';
import { deadLetterRow, DEAD_LETTER_COLUMNS, type DeadLetterRow } from './view';

/** Writes a batch of dead-letter records to `<database>.dead_letters` (a batch written twice is one set of rows). */
export function deadLettersHandler(client: ClickHouseClient, database: string): BatchHandler {
  const tables = new ActivityTables(client, database);
  return async (items) => {
    const rows = items.map(deadLetterRow).filter((row): row is DeadLetterRow => row !== null);
    await tables.insert('dead_letters', rows, DEAD_LETTER_COLUMNS);
  };
}
