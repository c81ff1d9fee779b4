/**
 * Network destinations: which IP addresses the service may call on a customer's behalf (addresses.ts, pure) and
 * where a URL leads once its host is resolved (destination.ts). The webhooks API checks a URL when it is
 * configured; the webhook dispatcher checks it again before every call.
 */
export * from './addresses';
export * from './destination';
