/**
 * DNS: TXT lookups for domain verification (resolver.ts) and the development DNS server that serves a zone file
 * on loopback (server.ts, zone.ts, dev.ts).
 */
export * from './resolver';
export * from './zone';
export * from './server';
export * from './dev';
