import { describe, expect, it } from 'vitest';
import { deadLetterTopicOf, defaultTopicNames, groupOf, PROJECTIONS, topicsOf, viewOf } from '../../src';

// The registry is the one list of views: what the projector runs, a replay rebuilds and `admin replay` offers.
describe('the view registry', () => {
  it('lists every view once, in the order admin replay offers them', () => {
    expect(PROJECTIONS).toEqual([
      'suppressions',
      'activity',
      'accounts',
      'audit',
      'allowance',
      'templates',
      'deadLetters',
      'inbound',
    ]);
  });

  it('keeps the five position-keeping views in Redis and the three others in ClickHouse', () => {
    expect(PROJECTIONS.filter((name) => viewOf(name).store === 'redis')).toEqual([
      'suppressions',
      'accounts',
      'audit',
      'allowance',
      'templates',
    ]);
    expect(PROJECTIONS.filter((name) => viewOf(name).store === 'clickhouse')).toEqual([
      'activity',
      'deadLetters',
      'inbound',
    ]);
  });

  it('reads each view from its topics: the audit from the history, the dead letters from two dead-letter topics', () => {
    const topics = defaultTopicNames;
    expect(Object.fromEntries(PROJECTIONS.map((name) => [name, topicsOf(name, topics)]))).toEqual({
      suppressions: [topics.suppressions],
      activity: [topics.messages],
      accounts: [topics.accounts],
      audit: [topics.accountsHistory],
      allowance: [topics.messages],
      templates: [topics.accounts],
      deadLetters: [deadLetterTopicOf(topics.messages), deadLetterTopicOf(topics.deliveryRetries)],
      inbound: [topics.inbound],
    });
  });

  it('creates the topics it reads before consuming them where it may start first: the dead letters and inbound', () => {
    expect(PROJECTIONS.filter((name) => viewOf(name).ensureTopics)).toEqual(['deadLetters', 'inbound']);
    for (const name of ['deadLetters', 'inbound'] as const) {
      expect(viewOf(name).ensureTopics!(defaultTopicNames).map((config) => config.topic)).toEqual(
        topicsOf(name, defaultTopicNames),
      );
    }
  });

  it('names each consumer group after its view', () => {
    expect(PROJECTIONS.map((name) => groupOf(name))).toEqual(PROJECTIONS.map((name) => `projector-${name}`));
  });

  it('refuses to rebuild a view without its store', () => {
    expect(() => viewOf('suppressions').rebuild({}, 'x')).toThrow('replaying suppressions needs options.redis');
    expect(() => viewOf('deadLetters').rebuild({}, 'x')).toThrow(
      'replaying deadLetters needs options.clickhouse and options.database',
    );
  });
});
