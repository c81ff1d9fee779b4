/**
 * The activity store (ClickHouse, built from `email.messages`), in two parts. The projection, here: the rows and
 * how message events become them (rows.ts, shared with the queries), their TabSeparated encoding (tabSeparated.ts),
 * the projector's batched writer (writer.ts, with the rows it keeps in memory in messageCache.ts and its reads and
 * inserts in tables.ts), how a batch is applied (apply.ts), the retention sweep (retention.ts), the fingerprint per
 * organization (fingerprint.ts), and how a replay rebuilds it into a fresh database and swaps its tables in
 * (rebuild.ts). What the API reads from it is in queries/. The organizations' dead letters are a view of their own
 * (../deadLetters/), written through this store's tables.
 */
export * from './rows';
export * from './tabSeparated';
export * from './writer';
export { normalizeRow } from './tables';
export { rowWeight } from './messageCache';
export * from './apply';
export * from './retention';
export * from './fingerprint';
export * from './rebuild';
export * from './queries';
