/**
 * The console's short-lived state in Redis (none of it is history, so none of it is an event): sign-in links
 * (single use, 15 minutes), sessions (idle and absolute timeouts), the sign-in rate limits, and when each API key
 * was last used. Every secret is stored by its SHA-256 only.
 */
export * from './signInLinks';
export * from './sessions';
export * from './rateLimit';
export * from './keyUsage';
