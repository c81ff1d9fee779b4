import type { Admin, ITopicConfig, KafkaMessage, Message } from 'kafkajs';
import { describeCause } from '../errors';
import { sleep } from '../retry';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Message activity is kept 30 days; the topic keeps 3 more so a projector that fell behind still finds its events. */
export const MESSAGE_RETENTION_DAYS = 30;
export const MESSAGE_TOPIC_RETENTION_MS = (MESSAGE_RETENTION_DAYS + 3) * DAY_MS;
/** A message may carry 10 MB of content; base64 and the Avro envelope add about a third. */
export const MAX_EVENT_BYTES = 20 * 1024 * 1024;
/**
 * The account history (the console's audit) is kept 400 days: a year of "who did what", plus a month's margin for
 * a yearly review that runs late. Account events are few (a handful per organization and week), so this costs little.
 */
export const ACCOUNT_HISTORY_RETENTION_DAYS = 400;
/**
 * Mail our MX received is read within seconds by its readers (bounces, complaints); the topic keeps it a week, so a
 * reader that was down over a long weekend still finds it, and an operator can look at what came back.
 */
export const RECEIVED_MAIL_RETENTION_DAYS = 7;
/**
 * The largest message the MX may be configured to take: a MailReceived is its bytes as they are (Avro `bytes`, no
 * base64) plus the envelope, which must fit the topic's `max.message.bytes` (MAX_EVENT_BYTES); 1 MB is left for the
 * envelope and the record's own overhead.
 */
export const MAX_RECEIVED_MESSAGE_BYTES = MAX_EVENT_BYTES - 1024 * 1024;

export interface TopicNames {
  messages: string;
  suppressions: string;
  accounts: string;
  /**
   * Every account event, copied from the compacted `accounts` topic by the projector's archiver and never compacted:
   * the audit's history, keyed by organization.
   */
  accountsHistory: string;
  /** Deferred deliveries waiting for their next attempt (the sender's durable retry schedule). */
  deliveryRetries: string;
  /**
   * Webhook calls to make (the dispatcher's WebhookCallScheduled records, first attempts); the later attempts wait
   * on `<webhookCalls>.retry-<n>` (see webhookRetryTopic).
   */
  webhookCalls: string;
  /** Mail our MX received (MailReceived: bounces, complaints, as they arrived), keyed by the message they are about. */
  received: string;
  /** Inbound messages (InboundMessageReceived, InboundMessageBypassed), keyed by message, kept as long as activity. */
  inbound: string;
}

export const defaultTopicNames: TopicNames = {
  messages: 'email.messages',
  suppressions: 'email.suppressions',
  accounts: 'accounts',
  accountsHistory: 'accounts.history',
  deliveryRetries: 'email.delivery-retries',
  webhookCalls: 'webhooks.calls',
  received: 'mail.received',
  inbound: 'email.inbound',
};

/** The topics under a prefix (`<prefix>.email.messages`, …): a benchmark's or a test's own copy of every topic. */
export function prefixedTopicNames(prefix: string): TopicNames {
  return {
    messages: `${prefix}.${defaultTopicNames.messages}`,
    suppressions: `${prefix}.${defaultTopicNames.suppressions}`,
    accounts: `${prefix}.${defaultTopicNames.accounts}`,
    accountsHistory: `${prefix}.${defaultTopicNames.accountsHistory}`,
    deliveryRetries: `${prefix}.${defaultTopicNames.deliveryRetries}`,
    webhookCalls: `${prefix}.${defaultTopicNames.webhookCalls}`,
    received: `${prefix}.${defaultTopicNames.received}`,
    inbound: `${prefix}.${defaultTopicNames.inbound}`,
  };
}

/**
 * Partitions of the busy topics (messages, suppressions, delivery retries, webhook calls and their retries, received
 * mail, inbound) when they are created: SENDLINE_KAFKA_PARTITIONS, default 6. A partition is read by one member of a
 * consumer group at a time, so this is how many copies of an app share a topic's work; more copies stand by. The
 * account topics keep 3 (a handful of events per organization and week). Set it before the topics exist: provisioning
 * never changes an existing topic and reports one whose count differs (`topicPartitionMismatches`); growing a topic
 * moves existing keys to other partitions (docs/scaling.md).
 */
export const DEFAULT_TOPIC_PARTITIONS = 6;

export function topicPartitionsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SENDLINE_KAFKA_PARTITIONS?.trim();
  if (!raw) return DEFAULT_TOPIC_PARTITIONS;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1 || value > 1000) {
    throw new Error(`SENDLINE_KAFKA_PARTITIONS must be a whole number from 1 to 1000, not ${JSON.stringify(raw)}`);
  }
  return value;
}

/** Topics with their partitions, retention and compaction (the architecture page's table). */
export function topicConfigs(
  names: TopicNames = defaultTopicNames,
  partitions = topicPartitionsFromEnv(),
): ITopicConfig[] {
  return [
    {
      topic: names.messages,
      numPartitions: partitions,
      configEntries: [
        { name: 'cleanup.policy', value: 'delete' },
        { name: 'retention.ms', value: String(MESSAGE_TOPIC_RETENTION_MS) },
        { name: 'max.message.bytes', value: String(MAX_EVENT_BYTES) },
      ],
    },
    {
      topic: names.suppressions,
      numPartitions: partitions,
      configEntries: [
        { name: 'cleanup.policy', value: 'compact' },
        { name: 'retention.ms', value: '-1' },
        { name: 'min.compaction.lag.ms', value: String(DAY_MS) },
      ],
    },
    {
      topic: names.accounts,
      numPartitions: 3,
      configEntries: [
        { name: 'cleanup.policy', value: 'compact' },
        { name: 'retention.ms', value: '-1' },
        { name: 'min.compaction.lag.ms', value: String(DAY_MS) },
      ],
    },
    {
      // Never compacted (the audit needs every event, not each entity's latest): deleted only past its retention.
      topic: names.accountsHistory,
      numPartitions: 3,
      configEntries: [
        { name: 'cleanup.policy', value: 'delete' },
        { name: 'retention.ms', value: String(ACCOUNT_HISTORY_RETENTION_DAYS * DAY_MS) },
      ],
    },
    {
      topic: names.deliveryRetries,
      numPartitions: partitions,
      configEntries: [
        { name: 'cleanup.policy', value: 'delete' },
        // A retry may wait up to 72 hours; keep a margin past that.
        { name: 'retention.ms', value: String(5 * DAY_MS) },
        { name: 'max.message.bytes', value: String(MAX_EVENT_BYTES) },
      ],
    },
    webhookCallTopicConfig(names.webhookCalls, partitions),
    {
      topic: names.received,
      numPartitions: partitions,
      configEntries: [
        { name: 'cleanup.policy', value: 'delete' },
        { name: 'retention.ms', value: String(RECEIVED_MAIL_RETENTION_DAYS * DAY_MS) },
        // Above the MX's largest message (MAX_RECEIVED_MESSAGE_BYTES) with its envelope.
        { name: 'max.message.bytes', value: String(MAX_EVENT_BYTES) },
      ],
    },
    {
      // Inbound messages carry Postmark's JSON of a received mail (up to the payload's limit, apps/inbound).
      topic: names.inbound,
      numPartitions: partitions,
      configEntries: [
        { name: 'cleanup.policy', value: 'delete' },
        { name: 'retention.ms', value: String(MESSAGE_TOPIC_RETENTION_MS) },
        { name: 'max.message.bytes', value: String(MAX_EVENT_BYTES) },
      ],
    },
  ];
}

/**
 * Where the n-th retry of a webhook call waits (n ≥ 1): one topic per retry, so every record of a topic waits the
 * same delay and records come due in the order they were appended; the consumer holds a partition at its first
 * record not yet due without holding back one due earlier (one topic for all retries would put a 1-minute retry
 * behind a 6-hour one).
 */
export function webhookRetryTopic(names: Pick<TopicNames, 'webhookCalls'>, retry: number): string {
  return `${names.webhookCalls}.retry-${retry}`;
}

/** The topic a webhook call's record waits on: the calls topic (retry 0), then one topic per retry. */
export function webhookCallTopic(names: Pick<TopicNames, 'webhookCalls'>, retry: number): string {
  return retry <= 0 ? names.webhookCalls : webhookRetryTopic(names, retry);
}

export function webhookCallTopicConfig(topic: string, partitions = topicPartitionsFromEnv()): ITopicConfig {
  return {
    topic,
    numPartitions: partitions,
    configEntries: [
      { name: 'cleanup.policy', value: 'delete' },
      // The longest wait is Postmark's last retry, 6 hours; keep days of margin for a dispatcher that was down.
      { name: 'retention.ms', value: String(3 * DAY_MS) },
      { name: 'max.message.bytes', value: String(MAX_EVENT_BYTES) },
    ],
  };
}

/** Dead letters of a topic: events a handler could not process, with the error in their headers. */
export function deadLetterTopicOf(topic: string): string {
  return `${topic}.dead-letter`;
}

export function deadLetterTopicConfig(topic: string): ITopicConfig {
  return {
    topic: deadLetterTopicOf(topic),
    numPartitions: 1,
    configEntries: [
      { name: 'retention.ms', value: String(30 * DAY_MS) },
      { name: 'max.message.bytes', value: String(MAX_EVENT_BYTES) },
    ],
  };
}

/**
 * The record that carries a failed message to its dead-letter topic: the original key and value, the error, the
 * attempts, where it came from and the consumer group that gave up on it in headers.
 */
export function deadLetterRecord(
  sourceTopic: string,
  message: KafkaMessage,
  error: unknown,
  attempts: number,
  groupId: string,
): Message {
  return {
    key: message.key,
    value: message.value,
    headers: {
      ...message.headers,
      'dead-letter-error': describeCause(error).slice(0, 2000),
      'dead-letter-error-code': (error as { code?: string })?.code ?? 'Unknown',
      'dead-letter-attempts': String(attempts),
      'dead-letter-source-topic': sourceTopic,
      'dead-letter-source-offset': message.offset,
      'dead-letter-group': groupId,
    },
  };
}

/** A topic whose partition count is not the one its configuration gives. */
export interface PartitionMismatch {
  topic: string;
  configured: number;
  actual: number;
}

/**
 * The existing topics among `configs` whose partition count differs from their configuration's (topics not created
 * yet are left out: `ensureTopics` creates them as configured). Provisioning reports them and stops: the apps would
 * run, but the copies that can share a topic are not what the configuration says, and a topic grown by hand has moved
 * keys (see `topicPartitionsFromEnv`).
 */
export async function topicPartitionMismatches(admin: Admin, configs: ITopicConfig[]): Promise<PartitionMismatch[]> {
  const existing = new Set(await admin.listTopics());
  const present = configs.filter((config) => existing.has(config.topic));
  if (present.length === 0) return [];
  const metadata = await admin.fetchTopicMetadata({ topics: present.map((config) => config.topic) });
  const actual = new Map(metadata.topics.map((topic) => [topic.name, topic.partitions.length]));
  return present
    .map((config) => ({
      topic: config.topic,
      configured: config.numPartitions ?? 1,
      actual: actual.get(config.topic)!,
    }))
    .filter((row) => row.configured !== row.actual);
}

/** Creates the topics that do not exist yet (and waits for their leaders); leaves existing ones as they are. */
export async function ensureTopics(admin: Admin, configs: ITopicConfig[]): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = configs.filter((config) => !existing.has(config.topic));
  if (missing.length === 0) return;
  let refused: unknown;
  try {
    // Leaders are awaited below: with several brokers, kafkajs's own wait fails when it asks a broker that has
    // not heard of the new topic yet.
    await admin.createTopics({ topics: missing, waitForLeaders: false });
  } catch (error) {
    // Another process may have created one of them in the meantime: the wait below tells.
    refused = error;
  }
  const topics = missing.map((config) => config.topic);
  // A refused creation is waited on briefly (someone else's creation showing up), a successful one longer.
  const waitMs = refused ? 5_000 : 30_000;
  const deadline = Date.now() + waitMs;
  for (;;) {
    const metadata = await admin.fetchTopicMetadata({ topics }).catch(() => undefined);
    const led = metadata?.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0));
    if (led && metadata!.topics.length === topics.length) return;
    if (Date.now() > deadline) {
      throw refused ?? new Error(`the topics ${topics.join(', ')} have no leaders ${waitMs} ms after their creation`);
    }
    await sleep(100);
  }
}
