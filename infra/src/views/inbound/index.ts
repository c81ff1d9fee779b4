/**
 * The organizations' inbound messages (ClickHouse, tables `inbound_messages` and `inbound_bypasses`, built from
 * email.inbound): the rows (rows.ts), how the projector applies a batch (apply.ts), the API's reads (reader.ts), the
 * fingerprint per organization (fingerprint.ts) and the replay's fresh copy swapped in (rebuild.ts). Its tables come
 * with the activity store's migrations (0010) and its retention sweep.
 */
export * from './rows';
export * from './apply';
export * from './fingerprint';
export * from './rebuild';
export * from './reader';
