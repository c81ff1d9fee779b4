import { hostname } from 'node:os';
import { DEFAULT_RETRY_POLICY, isValidDomainName, type RetryPolicy } from '@sendline/domain';
import { parseDnsServers, parseHostPort, returnPathDomainFromEnv, wholeNumberSetting } from '@sendline/infra';

/**
 * The sender's settings, from the environment (see `senderConfigFromEnv` for the variables).
 */
export interface SenderConfig {
  /** Consumer group of email.messages. */
  groupId: string;
  /** Consumer group of email.delivery-retries. */
  retryGroupId: string;
  /**
   * Where a group with no committed offsets starts: 'earliest' (production: nothing accepted is ever
   * skipped) or 'latest' (a fresh group for tests and benchmarks: only what is accepted from now on).
   */
  startNewGroupsAt: 'earliest' | 'latest';
  /** All mail goes to this host instead of the recipients' MX hosts (development, tests). */
  relay?: { host: string; port: number };
  /** DNS servers for MX lookups (`host` or `host:port`); absent: the system's resolvers. */
  dnsServers?: string[];
  /** SMTP port of MX hosts. */
  mxPort: number;
  /** The name the sender greets servers with (EHLO). */
  heloName: string;
  /**
   * The service's own return-path domain: the envelope sender's domain (`b.<token>@<it>`) of mail whose From
   * domain has no verified return path. Its MX must be the service's mail host.
   */
  returnPathDomain: string;
  /** SMTP transactions in flight at once, over all destinations. */
  concurrency: number;
  /** Pooled connections per destination host. */
  poolSize: number;
  maxMessagesPerConnection: number;
  connectionTimeoutMs: number;
  greetingTimeoutMs: number;
  socketTimeoutMs: number;
  /** The longest one SMTP transaction may take in all before it is abandoned (and deferred as a timeout). */
  transactionTimeoutMs: number;
  /** Backoff of deferred recipients and the retry window after which they soft-bounce. */
  retryPolicy: RetryPolicy;
  /** Consumer session timeout: a batch must be handled within it. */
  sessionTimeoutMs: number;
  /** Partitions of email.messages handled at once. */
  partitionsConsumedConcurrently: number;
  /** Messages handled together (composed, delivered, recorded, committed) within one fetched batch. */
  chunkSize: number;
  /**
   * How long handled offsets of email.messages may wait to be committed (one commit for every partition, at most
   * this often, and at once on stop): the commit is off the path from one fetch to the next. A crash hands that
   * much back to be read again, and the ledger skips it (nothing is sent twice).
   */
  commitIntervalMs: number;
  /** How long a stopping sender waits for what it holds before it gives up (and hands it back uncommitted). */
  shutdownTimeoutMs: number;
}

const HOUR_MS = 60 * 60 * 1000;

/**
 * | variable                             | default                         | meaning                                         |
 * |--------------------------------------|---------------------------------|-------------------------------------------------|
 * | SENDLINE_SMTP_RELAY                  | none (MX delivery); with SENDLINE_DEV=1: 127.0.0.1:SENDLINE_DEV_SMTP_PORT (2525) | send everything to this host:port |
 * | SENDLINE_DNS_SERVERS                 | system resolvers                | DNS servers for MX lookups, comma-separated     |
 * | SENDLINE_SMTP_MX_PORT                | 25                              | SMTP port of MX hosts                           |
 * | SENDLINE_SMTP_HELO                   | the machine's host name         | EHLO name                                       |
 * | SENDLINE_RETURN_PATH_DOMAIN          | bounces.sendline.dev            | envelope sender's domain without a verified return path |
 * | SENDLINE_SENDER_CONCURRENCY          | 200                             | SMTP transactions in flight                     |
 * | SENDLINE_SMTP_POOL_SIZE              | 10                              | connections per destination host                |
 * | SENDLINE_SMTP_MAX_MESSAGES_PER_CONNECTION | 500                        | messages per connection before it is renewed    |
 * | SENDLINE_SMTP_CONNECTION_TIMEOUT_MS  | 15000                           | connecting                                      |
 * | SENDLINE_SMTP_GREETING_TIMEOUT_MS    | 15000                           | waiting for the greeting                        |
 * | SENDLINE_SMTP_SOCKET_TIMEOUT_MS      | 30000                           | silence on an open connection                   |
 * | SENDLINE_SMTP_TRANSACTION_TIMEOUT_MS | 45000                           | one whole transaction                           |
 * | SENDLINE_RETRY_WINDOW_MS             | 259200000 (72 h)                | deferred recipients soft-bounce after this      |
 * | SENDLINE_RETRY_INITIAL_DELAY_MS      | 60000                           | first retry after this (doubling each time)     |
 * | SENDLINE_RETRY_MAX_DELAY_MS          | 14400000 (4 h)                  | longest wait between two attempts               |
 * | SENDLINE_SENDER_GROUP                | sender                          | consumer group of email.messages                |
 * | SENDLINE_SENDER_RETRY_GROUP          | sender-retries                  | consumer group of email.delivery-retries        |
 * | SENDLINE_SENDER_START                | earliest; with SENDLINE_DEV=1: latest | where a group with no commits starts      |
 * | SENDLINE_SENDER_SESSION_TIMEOUT_MS   | 60000                           | consumer session timeout                        |
 * | SENDLINE_SENDER_PARTITIONS           | 6                               | partitions handled at once                      |
 * | SENDLINE_SENDER_CHUNK_SIZE           | 500                             | messages handled and committed together         |
 * | SENDLINE_SENDER_COMMIT_INTERVAL_MS   | 1000                            | handled offsets committed at most this often    |
 * | SENDLINE_SENDER_SHUTDOWN_TIMEOUT_MS  | 30000                           | graceful stop: wait this long for work in hand  |
 */
export function senderConfigFromEnv(env: NodeJS.ProcessEnv = process.env): SenderConfig {
  const devRelay = env.SENDLINE_DEV === '1' ? `127.0.0.1:${env.SENDLINE_DEV_SMTP_PORT || 2525}` : undefined;
  const relay = env.SENDLINE_SMTP_RELAY || devRelay;
  const start = env.SENDLINE_SENDER_START || (env.SENDLINE_DEV === '1' ? 'latest' : 'earliest');
  if (start !== 'earliest' && start !== 'latest') {
    throw new Error(`SENDLINE_SENDER_START must be earliest or latest, not ${JSON.stringify(start)}`);
  }
  const dnsServers = parseDnsServers(env.SENDLINE_DNS_SERVERS);
  const returnPathDomain = returnPathDomainFromEnv(env).toLowerCase();
  if (!isValidDomainName(returnPathDomain)) {
    throw new Error(`SENDLINE_RETURN_PATH_DOMAIN must be a domain name, not ${JSON.stringify(returnPathDomain)}`);
  }
  return {
    groupId: env.SENDLINE_SENDER_GROUP || 'sender',
    retryGroupId: env.SENDLINE_SENDER_RETRY_GROUP || 'sender-retries',
    startNewGroupsAt: start,
    ...(relay && { relay: parseHostPort(relay, 25) }),
    ...(dnsServers && { dnsServers }),
    mxPort: wholeNumberSetting(env, 'SENDLINE_SMTP_MX_PORT', 25),
    heloName: env.SENDLINE_SMTP_HELO || hostname(),
    returnPathDomain,
    concurrency: wholeNumberSetting(env, 'SENDLINE_SENDER_CONCURRENCY', 200),
    poolSize: wholeNumberSetting(env, 'SENDLINE_SMTP_POOL_SIZE', 10),
    maxMessagesPerConnection: wholeNumberSetting(env, 'SENDLINE_SMTP_MAX_MESSAGES_PER_CONNECTION', 500),
    connectionTimeoutMs: wholeNumberSetting(env, 'SENDLINE_SMTP_CONNECTION_TIMEOUT_MS', 15_000),
    greetingTimeoutMs: wholeNumberSetting(env, 'SENDLINE_SMTP_GREETING_TIMEOUT_MS', 15_000),
    socketTimeoutMs: wholeNumberSetting(env, 'SENDLINE_SMTP_SOCKET_TIMEOUT_MS', 30_000),
    transactionTimeoutMs: wholeNumberSetting(env, 'SENDLINE_SMTP_TRANSACTION_TIMEOUT_MS', 45_000),
    retryPolicy: {
      ...DEFAULT_RETRY_POLICY,
      giveUpAfterMs: wholeNumberSetting(env, 'SENDLINE_RETRY_WINDOW_MS', 72 * HOUR_MS),
      initialDelayMs: wholeNumberSetting(env, 'SENDLINE_RETRY_INITIAL_DELAY_MS', DEFAULT_RETRY_POLICY.initialDelayMs),
      maxDelayMs: wholeNumberSetting(env, 'SENDLINE_RETRY_MAX_DELAY_MS', DEFAULT_RETRY_POLICY.maxDelayMs),
    },
    sessionTimeoutMs: wholeNumberSetting(env, 'SENDLINE_SENDER_SESSION_TIMEOUT_MS', 60_000, 6000),
    partitionsConsumedConcurrently: wholeNumberSetting(env, 'SENDLINE_SENDER_PARTITIONS', 6),
    chunkSize: wholeNumberSetting(env, 'SENDLINE_SENDER_CHUNK_SIZE', 500),
    commitIntervalMs: wholeNumberSetting(env, 'SENDLINE_SENDER_COMMIT_INTERVAL_MS', 1000, 0),
    shutdownTimeoutMs: wholeNumberSetting(env, 'SENDLINE_SENDER_SHUTDOWN_TIMEOUT_MS', 30_000),
  };
}
