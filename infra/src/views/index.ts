/**
 * The views built from the log, one folder each: `suppressions/`, `accounts/`, `audit/`, `allowance/` and `templates/`
 * (Redis), `activity/`, `deadLetters/` and `inbound/` (ClickHouse). Each folder holds the view's layout, reads and writes, how a batch
 * is applied to it, its fingerprint per organization, and how a replay rebuilds and swaps it (a RebuildableView).
 *
 * Shared by the views: positions.ts (a Redis view's position per partition, kept with its data, and the
 * guarded Lua script that writes both), apply.ts (BatchHandler; the positioned handler of the Redis views),
 * rebuildable.ts (what a replay needs of a view, and the fingerprint), redisRebuild.ts (a Redis view
 * rebuilt in a fresh namespace and swapped in by renaming its keys); registry.ts: the one list of views, each
 * with its topics, its store, its handler and its rebuild (what the projector, a replay and `admin replay` read).
 */
export * from './positions';
export * from './apply';
export * from './rebuildable';
export * from './redisRebuild';
export * from './registry';
export * from './suppressions';
export * from './accounts';
export * from './audit';
export * from './allowance';
export * from './activity';
export * from './deadLetters';
export * from './templates';
export * from './inbound';
