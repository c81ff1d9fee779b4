/**
 * Organizations, members, sending domains, API keys, webhooks and the monthly allowance: the organization decider
 * (commands.ts decides, webhookCommands.ts for its webhooks; organization.ts evolves), the DNS records a domain
 * publishes (dns.ts), API key formats (apiKeys.ts), the allowance's period (allowance.ts) and the rules of a
 * webhook's configuration (webhooks.ts), and what each member role may do in the console (roles.ts).
 */
export * from './rules';
export * from './roles';
export * from './audit';
export * from './organization';
export * from './commands';
export * from './webhookCommands';
export * from './decider';
export * from './apiKeys';
export * from './dns';
export * from './allowance';
export * from './webhooks';
export * from './inbound';
export * from './inboundCommands';
