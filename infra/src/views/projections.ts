import { deadLetterTopicOf, type TopicNames } from '../kafka/topics';

/**
 * The projections the projector runs: which views, from which topics, under which consumer groups. How each
 * view applies a batch, and how a replay rebuilds it, live with the view (infra/src/views/<view>/).
 */

/** The views the projector keeps, each from its topic. */
export type ProjectionName = 'accounts' | 'audit' | 'suppressions' | 'allowance' | 'activity' | 'deadLetters';
export const PROJECTIONS: readonly ProjectionName[] = [
  'accounts',
  'audit',
  'suppressions',
  'allowance',
  'activity',
  'deadLetters',
];
/** The views kept in Redis: each keeps its position with its data (`<ns>:positions:<view>`). */
export const REDIS_PROJECTIONS: readonly ProjectionName[] = ['accounts', 'audit', 'suppressions', 'allowance'];

export function topicsOf(projection: ProjectionName, topics: TopicNames): string[] {
  switch (projection) {
    case 'accounts':
      return [topics.accounts];
    // The audit keeps every account event: it reads the history the archiver copies, never the compacted topic.
    case 'audit':
      return [topics.accountsHistory];
    case 'suppressions':
      return [topics.suppressions];
    case 'allowance':
    case 'activity':
      return [topics.messages];
    case 'deadLetters':
      // The messages' events a consumer set aside: the organizations' dead letters (ClickHouse, like activity).
      return [deadLetterTopicOf(topics.messages), deadLetterTopicOf(topics.deliveryRetries)];
  }
}

/**
 * The consumer group of a projection: `projector-accounts`, `projector-audit`, `projector-suppressions`,
 * `projector-allowance`, `projector-activity`, `projector-deadLetters`.
 */
export function groupOf(projection: ProjectionName, prefix = 'projector'): string {
  return `${prefix}-${projection}`;
}

/** The archiver's consumer group (`projector-accounts-archiver`): it copies `accounts` to `accounts.history`. */
export function archiverGroupOf(prefix = 'projector'): string {
  return `${prefix}-accounts-archiver`;
}
