/**
 * An organization's account: its members, sending domains (DKIM keys, DNS records, verification), API keys and
 * allowance. `AccountsService` runs each command through the organization decider; the modules beside it make what
 * a command carries (a key's token and hash, a domain's keys) and the summaries a caller shows.
 */
export * from './service';
export * from './summaries';
export * from './apiKeys';
export * from './sendingDomains';
