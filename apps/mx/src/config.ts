import {
  wholeNumberSetting,
  mailHostFromEnv,
  MAX_RECEIVED_MESSAGE_BYTES,
  returnPathNamesFromEnv,
  inboundDomainFromEnv,
  type ReturnPathNames,
} from '@sendline/infra';

/** The receiving server's settings, from the environment (see `mxConfigFromEnv` for the variables). */
export interface MxConfig {
  host: string;
  /** 0 picks a free port (the server reports the one it got). */
  port: number;
  /** The name in the greeting and the EHLO answer: the host the sending domains' MX records name. */
  name: string;
  /** STARTTLS is offered only with a certificate and its key (PEM files); without them it is not announced. */
  tls?: { certFile: string; keyFile: string };
  /** The largest message taken, bytes: announced in EHLO (SIZE), a larger one is refused 552 5.3.4. */
  maxBytes: number;
  /** Recipients of one transaction; more are answered 452 4.5.3. */
  maxRecipients: number;
  /** Connections open at once in all; more are answered 421. */
  maxConnections: number;
  /** Connections open at once from one client address; more are answered 421 4.7.0. */
  maxConnectionsPerAddress: number;
  /** How long the server waits for the client's next command or the next bytes of a message (RFC 5321: 5 min). */
  socketTimeoutMs: number;
  /** How long one connection may last in all, whatever it does; then 421 4.4.2 and closed (the client comes back). */
  sessionTimeoutMs: number;
  /** How long a stopping server lets open connections finish before it closes them (421). */
  closeTimeoutMs: number;
  /** How long a message waits for Kafka's acknowledgement before it is answered 451 4.3.0. */
  appendTimeoutMs: number;
  /**
   * How long the sending domains, and the inbound addresses found, read from the accounts view are used before they
   * are read again.
   */
  domainCacheMs: number;
  returnPath: ReturnPathNames;
  /** The service's inbound domain (SENDLINE_INBOUND_DOMAIN): mail to an organization's inbound address there is taken. */
  inboundDomain: string;
}

export const DEFAULT_MX_MAX_BYTES = 10 * 1024 * 1024;

/**
 * | variable                                | default                         | meaning                                   |
 * |-----------------------------------------|---------------------------------|-------------------------------------------|
 * | SENDLINE_MX_HOST                        | 127.0.0.1                       | address to listen on (0.0.0.0: every one) |
 * | SENDLINE_MX_PORT                        | 25 (`npm start`: 2526)          | port; 0 picks a free one                  |
 * | SENDLINE_MX_NAME                        | SENDLINE_MAIL_HOST (mail.sendline.dev) | name in the greeting and EHLO      |
 * | SENDLINE_MX_TLS_CERT / SENDLINE_MX_TLS_KEY | none (no STARTTLS)           | PEM files; both set: STARTTLS offered     |
 * | SENDLINE_MX_MAX_BYTES                   | 10485760 (10 MB), at most 19 MB | largest message (EHLO SIZE; over: 552)    |
 * | SENDLINE_MX_MAX_RECIPIENTS              | 50                              | recipients per transaction (over: 452)    |
 * | SENDLINE_MX_MAX_CONNECTIONS             | 500                             | connections at once (over: 421)           |
 * | SENDLINE_MX_MAX_CONNECTIONS_PER_ADDRESS | 20                              | connections at once per client (over: 421)|
 * | SENDLINE_MX_SOCKET_TIMEOUT_MS           | 300000 (5 min)                  | silence between commands or data          |
 * | SENDLINE_MX_SESSION_TIMEOUT_MS          | 1800000 (30 min)                | one connection in all                     |
 * | SENDLINE_MX_CLOSE_TIMEOUT_MS            | 30000                           | on SIGTERM, open connections' grace       |
 * | SENDLINE_MX_APPEND_TIMEOUT_MS           | 10000                           | Kafka's acknowledgement (else 451)        |
 * | SENDLINE_MX_DOMAIN_CACHE_MS             | 30000                           | sending domains cached this long          |
 * | SENDLINE_RETURN_PATH_DOMAIN             | bounces.sendline.dev            | the service's own return-path domain      |
 * | SENDLINE_RETURN_PATH_LABEL              | bounces                         | `{label}.{sending domain}` return paths   |
 */
export function mxConfigFromEnv(env: NodeJS.ProcessEnv = process.env): MxConfig {
  const certFile = env.SENDLINE_MX_TLS_CERT?.trim();
  const keyFile = env.SENDLINE_MX_TLS_KEY?.trim();
  if (Boolean(certFile) !== Boolean(keyFile)) {
    throw new Error('SENDLINE_MX_TLS_CERT and SENDLINE_MX_TLS_KEY go together: set both, or neither');
  }
  return {
    host: env.SENDLINE_MX_HOST?.trim() || '127.0.0.1',
    port: wholeNumberSetting(env, 'SENDLINE_MX_PORT', 25, 0, 65535),
    name: env.SENDLINE_MX_NAME?.trim() || mailHostFromEnv(env),
    ...(certFile && keyFile ? { tls: { certFile, keyFile } } : {}),
    maxBytes: wholeNumberSetting(env, 'SENDLINE_MX_MAX_BYTES', DEFAULT_MX_MAX_BYTES, 1024, MAX_RECEIVED_MESSAGE_BYTES),
    maxRecipients: wholeNumberSetting(env, 'SENDLINE_MX_MAX_RECIPIENTS', 50),
    maxConnections: wholeNumberSetting(env, 'SENDLINE_MX_MAX_CONNECTIONS', 500),
    maxConnectionsPerAddress: wholeNumberSetting(env, 'SENDLINE_MX_MAX_CONNECTIONS_PER_ADDRESS', 20),
    socketTimeoutMs: wholeNumberSetting(env, 'SENDLINE_MX_SOCKET_TIMEOUT_MS', 5 * 60_000, 1000),
    sessionTimeoutMs: wholeNumberSetting(env, 'SENDLINE_MX_SESSION_TIMEOUT_MS', 30 * 60_000, 1000),
    closeTimeoutMs: wholeNumberSetting(env, 'SENDLINE_MX_CLOSE_TIMEOUT_MS', 30_000, 0),
    appendTimeoutMs: wholeNumberSetting(env, 'SENDLINE_MX_APPEND_TIMEOUT_MS', 10_000, 100),
    domainCacheMs: wholeNumberSetting(env, 'SENDLINE_MX_DOMAIN_CACHE_MS', 30_000, 0),
    returnPath: returnPathNamesFromEnv(env),
    inboundDomain: inboundDomainFromEnv(env),
  };
}
