/**
 * What the API reads from the activity store: the message list and a message's details (reader.ts, with their
 * shapes in types.ts), bounces (bounces.ts), outbound statistics (stats.ts), the messages a returned mail may be
 * about (returnedMessages.ts) and a sent message's MIME source, rebuilt from its accepted event (dump.ts). Every
 * read goes through query.ts: the database name made safe once, and one deadline per read.
 */
export * from './types';
export * from './reader';
export * from './query';
export * from './bounces';
export * from './stats';
export * from './dump';
export * from './returnedMessages';
