/**
 * The official TypeScript client of the API: client.ts (the calls), wire.ts (request and answer shapes on the wire),
 * types.ts (what callers see), errors.ts (one error type carrying ErrorCode, status and retriability).
 */
export { Client, API_KEY_ENV, DEFAULT_TIMEOUT_MS, PRODUCTION_BASE_URL, STAGING_BASE_URL } from './client';
export type { DomainsApi, EmailsApi, MembersApi, SuppressionsApi } from './client';
export { SendlineError, SendlineError as ClientError } from './errors';
export type { SendlineErrorCode, SendlineErrorInit } from './errors';
export { VERSION } from './version';
export type * from './types';
