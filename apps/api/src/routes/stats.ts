import { BOUNCE_KINDS, BOUNCE_TYPE_OF_KIND, FAILURE_KINDS, type BounceKind } from '@sendline/domain';
import type { BouncesOnDay, StatsFilters } from '@sendline/infra';
import { Type, type Static } from 'typebox';
import { requireKey } from '../auth';
import type { Api, ApiDependencies } from '../context';
import { assertOutboundStream } from '../messageStream';
import { errorResponses } from '../openapi';
import { dateFilter, either, PeriodAndStreamFilters } from './activity';

/**
 * Postmark's outbound statistics, from the activity store: per UTC day (Postmark counts in its own time zone), over
 * the 30 days kept. Sent counts messages taken by the mail server; Bounced the final failures, per recipient (hard,
 * soft, blocked: see infra/src/views/activity/queries/stats.ts); SpamComplaints the recipients' complaints. What this service
 * does not do (opens, clicks, an SMTP API) is counted as 0.
 */

const StatsQuery = Type.Object(
  {
    tag: Type.Optional(Type.String()),
    ...PeriodAndStreamFilters,
  },
  { additionalProperties: true },
);

const Overview = Type.Object({
  Sent: Type.Integer(),
  Bounced: Type.Integer(),
  SMTPApiErrors: Type.Integer(),
  BounceRate: Type.Number({ description: 'Bounced / Sent × 100, to 3 decimals (0 when nothing was sent)' }),
  SpamComplaints: Type.Integer(),
  SpamComplaintsRate: Type.Number({ description: 'SpamComplaints / Sent × 100, to 3 decimals' }),
  Opens: Type.Integer(),
  UniqueOpens: Type.Integer(),
  Tracked: Type.Integer(),
  WithLinkTracking: Type.Integer(),
  WithOpenTracking: Type.Integer(),
  TotalTrackedLinksSent: Type.Integer(),
  UniqueLinksClicked: Type.Integer(),
  TotalClicks: Type.Integer(),
  WithClientRecorded: Type.Integer(),
  WithPlatformRecorded: Type.Integer(),
  WithReadTimeRecorded: Type.Integer(),
});

const SentCounts = Type.Object({
  Days: Type.Array(Type.Object({ Date: Type.String(), Sent: Type.Integer() })),
  Sent: Type.Integer(),
});

/**
 * Postmark's four bounce-count keys, and Blocked for refusals by policy (HardBounce, SoftBounce and Blocked add up to
 * Bounced). Transient counts the DSNs that said a delivery was delayed (a deferral during the conversation is
 * retried, not counted); automatic replies and spam complaints have no key here (complaints: /stats/outbound/spam).
 */
const BounceCountFields = {
  HardBounce: Type.Integer(),
  SoftBounce: Type.Integer(),
  Transient: Type.Integer(),
  SMTPApiError: Type.Integer(),
  Blocked: Type.Integer(),
};
const BounceCounts = Type.Object({
  Days: Type.Array(Type.Object({ Date: Type.String(), ...BounceCountFields })),
  ...BounceCountFields,
});
type BounceCountKeys = Omit<Static<typeof BounceCounts>, 'Days'>;

const SpamCounts = Type.Object({
  Days: Type.Array(Type.Object({ Date: Type.String(), SpamComplaint: Type.Integer() })),
  SpamComplaint: Type.Integer(),
});

const ERRORS = errorResponses([401, 403, 422, 503], {
  422: 'ErrorCode 300: a date filter is invalid; ErrorCode 1235: a message stream other than outbound',
});

function bounceCountKeys(counts: Record<BounceKind, number>): BounceCountKeys {
  // There is no SMTP API: SMTPApiError stays 0.
  const keys: BounceCountKeys = { HardBounce: 0, SoftBounce: 0, Transient: 0, SMTPApiError: 0, Blocked: 0 };
  for (const kind of BOUNCE_KINDS) {
    const type = BOUNCE_TYPE_OF_KIND[kind].type;
    if (type in keys) keys[type as keyof BounceCountKeys] += counts[kind];
  }
  return keys;
}

/** The counts of some kinds over several days. */
function total(days: readonly BouncesOnDay[], kinds: readonly BounceKind[]): number {
  return days.reduce((sum, day) => sum + kinds.reduce((of, kind) => of + day.counts[kind], 0), 0);
}

/** A share of Sent in percent, to 3 decimals (0 when nothing was sent), as Postmark's rates are. */
const rate = (count: number, sent: number) => (sent === 0 ? 0 : Math.round((count / sent) * 100_000) / 1000);

export function statsRoutes(deps: ApiDependencies) {
  function filtersOf(q: Static<typeof StatsQuery>): StatsFilters {
    for (const stream of [q.messagestream, q.messageStream]) {
      if (stream !== undefined && stream !== '') assertOutboundStream(stream);
    }
    const filters: StatsFilters = {};
    if (q.tag) filters.tag = q.tag;
    const fromDate = dateFilter('fromdate', either(q.fromdate, q.fromDate), false);
    const toDate = dateFilter('todate', either(q.todate, q.toDate), true);
    if (fromDate !== undefined) filters.fromDate = fromDate;
    if (toDate !== undefined) filters.toDate = toDate;
    return filters;
  }

  return async function (app: Api): Promise<void> {
    app.get(
      '/stats/outbound',
      {
        config: { scope: 'email:read' },
        schema: {
          tags: ['stats'],
          summary: 'Outbound overview: sent, bounced, bounce rate',
          querystring: StatsQuery,
          response: { 200: Overview, ...ERRORS },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const filters = filtersOf(request.query);
        const [sent, bounces] = await Promise.all([
          deps.stats.sentByDay(key.organizationId, filters),
          deps.stats.bouncesByDay(key.organizationId, filters),
        ]);
        const Sent = sent.reduce((sum, day) => sum + day.sent, 0);
        const Bounced = total(bounces, FAILURE_KINDS);
        const SpamComplaints = total(bounces, ['SpamComplaint']);
        return {
          Sent,
          Bounced,
          SMTPApiErrors: 0,
          BounceRate: rate(Bounced, Sent),
          SpamComplaints,
          SpamComplaintsRate: rate(SpamComplaints, Sent),
          Opens: 0,
          UniqueOpens: 0,
          Tracked: 0,
          WithLinkTracking: 0,
          WithOpenTracking: 0,
          TotalTrackedLinksSent: 0,
          UniqueLinksClicked: 0,
          TotalClicks: 0,
          WithClientRecorded: 0,
          WithPlatformRecorded: 0,
          WithReadTimeRecorded: 0,
        };
      },
    );

    app.get(
      '/stats/outbound/sends',
      {
        config: { scope: 'email:read' },
        schema: {
          tags: ['stats'],
          summary: 'Messages sent per day (days with none are left out)',
          querystring: StatsQuery,
          response: { 200: SentCounts, ...ERRORS },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const days = await deps.stats.sentByDay(key.organizationId, filtersOf(request.query));
        return {
          Days: days.map((day) => ({ Date: day.date, Sent: day.sent })),
          Sent: days.reduce((sum, day) => sum + day.sent, 0),
        };
      },
    );

    app.get(
      '/stats/outbound/bounces',
      {
        config: { scope: 'email:read' },
        schema: {
          tags: ['stats'],
          summary: 'Bounces per day and type (days with none are left out)',
          querystring: StatsQuery,
          response: { 200: BounceCounts, ...ERRORS },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const days = await deps.stats.bouncesByDay(key.organizationId, filtersOf(request.query));
        const all = Object.fromEntries(BOUNCE_KINDS.map((kind) => [kind, total(days, [kind])])) as Record<
          BounceKind,
          number
        >;
        // Days with only automatic replies or complaints have no key here: left out, as days without bounces are.
        const counted = days.filter((day) => Object.values(bounceCountKeys(day.counts)).some((count) => count > 0));
        return {
          Days: counted.map((day) => ({ Date: day.date, ...bounceCountKeys(day.counts) })),
          ...bounceCountKeys(all),
        };
      },
    );

    app.get(
      '/stats/outbound/spam',
      {
        config: { scope: 'email:read' },
        schema: {
          tags: ['stats'],
          summary: 'Spam complaints per day (days with none are left out)',
          querystring: StatsQuery,
          response: { 200: SpamCounts, ...ERRORS },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const days = await deps.stats.bouncesByDay(key.organizationId, filtersOf(request.query));
        const counted = days.filter((day) => day.counts.SpamComplaint > 0);
        return {
          Days: counted.map((day) => ({ Date: day.date, SpamComplaint: day.counts.SpamComplaint })),
          SpamComplaint: total(days, ['SpamComplaint']),
        };
      },
    );
  };
}
