/**
 * Adapters to the real services, one folder each: kafka/ (the event store, topics, routing), registry/ (Avro in the
 * schema registry), commands/ (the command handler every writer uses), views/ (Redis and ClickHouse views built from
 * the log), redis/ (clients, the API's idempotency store), console/ (sign-in links, sessions, rate limits),
 * clickhouse/, smtp/ (composing, DKIM, delivery, the test mail server), mail/ (reading the mail that comes back:
 * bounces, complaints, automatic replies), webhooks/ (a call's ids, its records' command handler, the delivery log),
 * dns/, net/ (which addresses a webhook may reach), crypto/. Service addresses: config.ts; which errors are
 * retriable: errors.ts, availability.ts.
 */
export * from './errors';
export * from './availability';
export * from './retry';
export * from './ids';
export * from './config';
export * from './kafka/topics';
export * from './kafka/routing';
export * from './kafka/eventStore';
export * from './kafka/reachability';
export * from './kafka/offsets';
export * from './commands';
export * from './registry/codec';
export * from './registry/registerAll';
export * from './clickhouse/client';
export * from './clickhouse/migrations';
export * from './redis/client';
export * from './redis/leases';
export * from './redis/idempotency';
export * from './console';
export * from './views';
export * from './crypto/secretBox';
export * from './crypto/apiKeyHash';
export * from './crypto/returnPathToken';
export * from './crypto/inboundAddress';
export * from './dns';
export * from './net';
export * from './smtp';
export * from './mail';
export * from './inbound/ids';
export * from './webhooks';
