import { describe, expect, it } from 'vitest';
import { instanceIdFromEnv, kafkaClientId, topicConfigs, topicPartitionsFromEnv } from '../../src';

describe('instanceIdFromEnv: each copy of an app its own name', () => {
  it('is SENDLINE_INSTANCE_ID when set', () => {
    expect(instanceIdFromEnv({ SENDLINE_INSTANCE_ID: ' sender-2 ' })).toBe('sender-2');
  });

  it('is the host name and the pid otherwise, so two processes running at once never share one', () => {
    const first = instanceIdFromEnv({}, 101);
    const second = instanceIdFromEnv({}, 102);
    expect(first).toMatch(/^[A-Za-z0-9._-]+-101$/);
    expect(second).not.toBe(first);
  });

  it('refuses a name Kafka and the logs could not show as one word', () => {
    expect(() => instanceIdFromEnv({ SENDLINE_INSTANCE_ID: 'copy a' })).toThrow(/SENDLINE_INSTANCE_ID/);
    expect(() => instanceIdFromEnv({ SENDLINE_INSTANCE_ID: 'x'.repeat(65) })).toThrow(/SENDLINE_INSTANCE_ID/);
  });

  it('names the Kafka client <app>-<id>, and an API worker <app>-<id>-w<n>', () => {
    expect(kafkaClientId('sender', { SENDLINE_INSTANCE_ID: 'b' })).toBe('sender-b');
    expect(kafkaClientId('api', { SENDLINE_INSTANCE_ID: 'b' }, 3)).toBe('api-b-w3');
  });
});

describe('topicPartitionsFromEnv: how many copies can share a topic', () => {
  it('is 6 by default, SENDLINE_KAFKA_PARTITIONS when set', () => {
    expect(topicPartitionsFromEnv({})).toBe(6);
    expect(topicPartitionsFromEnv({ SENDLINE_KAFKA_PARTITIONS: '12' })).toBe(12);
  });

  it('refuses what is not a whole number from 1 to 1000', () => {
    for (const raw of ['0', '-1', '2.5', 'six', '1001']) {
      expect(() => topicPartitionsFromEnv({ SENDLINE_KAFKA_PARTITIONS: raw })).toThrow(/SENDLINE_KAFKA_PARTITIONS/);
    }
  });

  it('gives the busy topics the count, and the account topics and dead letters their own', () => {
    const counts = Object.fromEntries(topicConfigs(undefined, 12).map((c) => [c.topic, c.numPartitions]));
    expect(counts).toMatchObject({
      'email.messages': 12,
      'email.suppressions': 12,
      'email.delivery-retries': 12,
      'webhooks.calls': 12,
      'mail.received': 12,
      'email.inbound': 12,
      accounts: 3,
      'accounts.history': 3,
    });
  });
});
