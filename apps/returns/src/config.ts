import { wholeNumberSetting } from '@sendline/infra';

/** The returns reader's settings, from the environment (see `returnsConfigFromEnv` for the variables). */
export interface ReturnsConfig {
  /** The consumer group that reads mail.received. */
  groupId: string;
  /** How long the group waits for a silent member (a killed reader) before its partitions go to another. */
  sessionTimeoutMs: number;
}

/**
 * | variable                            | default         | meaning                                  |
 * |-------------------------------------|-----------------|------------------------------------------|
 * | SENDLINE_RETURNS_GROUP              | returns-reader  | the consumer group of mail.received      |
 * | SENDLINE_RETURNS_SESSION_TIMEOUT_MS | 30000           | consumer session timeout (at least 6000) |
 *
 * A benchmark or a fault test runs the reader on topics of its own (SENDLINE_TOPIC_PREFIX) and then on a group of its
 * own too: a group shared with the running service's reader would hand its partitions back and forth between them.
 */
export function returnsConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ReturnsConfig {
  return {
    groupId: env.SENDLINE_RETURNS_GROUP?.trim() || 'returns-reader',
    sessionTimeoutMs: wholeNumberSetting(env, 'SENDLINE_RETURNS_SESSION_TIMEOUT_MS', 30_000, 6000),
  };
}
