/**
 * The organizations' dead letters (ClickHouse, table `dead_letters`, built from the dead-letter topics of
 * `email.messages` and `email.delivery-retries`), for the console's recent problems: the row of a set-aside record
 * and the console's read (view.ts), how the projector applies a batch (apply.ts), its fingerprint per organization
 * (fingerprint.ts), and how a replay rebuilds it into a fresh database and swaps its table in (rebuild.ts). Its
 * table comes with the activity store's migrations, and it writes through the activity store's tables.
 */
export * from './view';
export * from './apply';
export * from './fingerprint';
export * from './rebuild';
