/**
 * The receiving server (MX): mail for the return-path addresses, recorded in Kafka before the 250.
 *
 * - server.ts: the SMTP server (smtp-server), step by step: connect → MAIL → RCPT → DATA → append → 250.
 * - recipients.ts: which recipients it takes (never an open relay); returnPathHosts.ts: the domains it checks them
 *   against, cached; inboundAddresses.ts: the organizations of inbound addresses, cached; connections.ts: connections
 *   per client address.
 * - received.ts: the MailReceived command of one message; config.ts, main.ts: configuration and the process.
 */
export { DEFAULT_MX_MAX_BYTES, mxConfigFromEnv, type MxConfig } from './config';
export { ConnectionsPerAddress } from './connections';
export { CachedInboundAddresses, type CachedInboundAddressesOptions } from './inboundAddresses';
export { recordMailReceived, type ReceivedEnvelope } from './received';
export { recipientVerdict, type RecipientVerdict, type ReturnPathHosts } from './recipients';
export { CachedReturnPathHosts, type CachedReturnPathHostsOptions } from './returnPathHosts';
export { MxServer, type MxServerOptions, type MxStats } from './server';
