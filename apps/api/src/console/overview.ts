import { allowancePeriod, BOUNCE_KINDS, FAILURE_KINDS, type BounceKind } from '@sendline/domain';
import type { DeadLetter } from '@sendline/infra';
import type { Api, ApiDependencies } from '../context';
import { memberOf } from './session';

const DAY_MS = 24 * 60 * 60 * 1000;
export const OVERVIEW_DAYS = 30;
export const OVERVIEW_PROBLEMS = 20;

/** The bounces that are problems: the final failures and the spam complaints (a delay or an automatic reply is not). */
const PROBLEM_KIND = {
  HardBounced: 'HardBounce',
  SoftBounced: 'SoftBounce',
  PolicyRejected: 'PolicyRejected',
  SpamComplaint: 'SpamComplaint',
} as const satisfies Partial<Record<BounceKind, string>>;
const PROBLEM_KINDS = Object.keys(PROBLEM_KIND) as (keyof typeof PROBLEM_KIND)[];
const isProblem = (kind: BounceKind): kind is keyof typeof PROBLEM_KIND => kind in PROBLEM_KIND;

/** A dead letter in words: who set it aside, after how many attempts, and why. */
export function deadLetterDetail(letter: DeadLetter): string {
  const by = letter.consumerGroup ? ` by ${letter.consumerGroup}` : '';
  const attempts = letter.attempts > 0 ? ` after ${letter.attempts} attempt${letter.attempts === 1 ? '' : 's'}` : '';
  return `${letter.eventType} set aside${by}${attempts}: ${letter.error || letter.errorCode || 'no error recorded'}`;
}

/** The 30 UTC days ending today, oldest first, as `YYYY-MM-DD`. */
export function lastDays(now: number, count = OVERVIEW_DAYS): string[] {
  const today = Math.floor(now / DAY_MS);
  return Array.from({ length: count }, (_, i) => new Date((today - count + 1 + i) * DAY_MS).toISOString().slice(0, 10));
}

/**
 * The Overview page: this month's allowance (the counter the send path reserves against), the last 30 days per day
 * (sent, delivered, bounced, deferred: the activity store's statistics, as GET /stats/outbound counts them), and the
 * newest problems: recipient failures and spam complaints (the bounce search of GET /bounces) and the organization's
 * dead letters (an
 * event of its messages that a consumer set aside, e.g. a delivery failure the sender could not classify), newest
 * first. Every role reads it.
 */
export function overviewPage(deps: ApiDependencies) {
  return async function (api: Api): Promise<void> {
    api.get('/overview', async (request) => {
      const organization = memberOf(request).organization;
      const now = deps.now();
      const period = allowancePeriod(now);
      const days = lastDays(now);
      const filters = { fromDate: Date.parse(`${days[0]}T00:00:00.000Z`), toDate: now };
      const [record, used, sent, outcomes, bounces, deadLetters] = await Promise.all([
        deps.accounts.organization(organization.id),
        deps.allowance.used(organization.id, period),
        deps.stats.sentByDay(organization.id, filters),
        deps.stats.eventsByDay(organization.id, ['Delivered', 'Deferred', ...BOUNCE_KINDS], filters),
        deps.bounces.search(organization.id, { count: OVERVIEW_PROBLEMS, offset: 0, kinds: PROBLEM_KINDS }),
        deps.deadLetters.recent(organization.id, OVERVIEW_PROBLEMS),
      ]);
      const problems = [
        ...bounces.bounces.flatMap(({ kind, ...bounce }) =>
          isProblem(kind)
            ? [
                {
                  at: bounce.bouncedAt,
                  kind: PROBLEM_KIND[kind],
                  recipient: bounce.recipient,
                  messageId: bounce.messageId,
                  subject: bounce.subject,
                  detail: bounce.smtpResponse || bounce.summary,
                },
              ]
            : [],
        ),
        ...deadLetters.map((letter) => ({
          at: letter.deadAt,
          kind: 'DeadLetter' as const,
          recipient: '',
          messageId: letter.messageId,
          subject: letter.subject,
          detail: deadLetterDetail(letter),
        })),
      ]
        .sort((a, b) => b.at - a.at)
        .slice(0, OVERVIEW_PROBLEMS);
      const sentOn = new Map(sent.map((day) => [day.date, day.sent]));
      const outcomesOn = new Map(outcomes.map((day) => [day.date, day.counts]));
      return {
        allowance: { period, used, limit: record?.messagesPerMonth ?? null },
        days: days.map((date) => {
          const counts = outcomesOn.get(date);
          return {
            date,
            sent: sentOn.get(date) ?? 0,
            delivered: counts?.Delivered ?? 0,
            bounced: counts ? FAILURE_KINDS.reduce((sum, kind) => sum + counts[kind], 0) : 0,
            deferred: counts?.Deferred ?? 0,
          };
        }),
        problems,
      };
    });
  };
}
