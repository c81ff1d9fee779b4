import { BOUNCE_KINDS, BOUNCE_TYPE_OF_KIND, kindsOfBounceType, POSTMARK_BOUNCE_TYPES } from '@sendline/domain';
import type { BounceFilters, BounceRecord } from '@sendline/infra';
import { Type } from 'typebox';
import { requireKey } from '../auth';
import type { Api, ApiDependencies } from '../context';
import { ApiError } from '../errors';
import { assertOutboundStream } from '../messageStream';
import { documentedEnum, errorResponses } from '../openapi';
import { Count, dateFilter, either, MAX_COUNT, Offset, PeriodAndStreamFilters } from './activity';
import { suppressionDeletions } from './suppressions';

/** Postmark's documented spellings and the camelCase its clients send are both accepted. */
const SearchQuery = Type.Object(
  {
    count: Type.Optional(Count),
    offset: Type.Optional(Offset),
    type: Type.Optional(
      documentedEnum(Type.String({ description: "A Postmark bounce type, e.g. 'HardBounce'" }), [
        ...POSTMARK_BOUNCE_TYPES,
        '',
      ]),
    ),
    inactive: Type.Optional(
      documentedEnum(Type.String({ description: 'true: suppressed addresses only' }), ['true', 'false', '']),
    ),
    emailFilter: Type.Optional(Type.String({ description: 'A part of the recipient address' })),
    emailfilter: Type.Optional(Type.String()),
    tag: Type.Optional(Type.String()),
    messageID: Type.Optional(Type.String()),
    messageid: Type.Optional(Type.String()),
    ...PeriodAndStreamFilters,
  },
  { additionalProperties: true },
);

const Bounce = Type.Object({
  RecordType: Type.String(),
  ID: Type.Integer({ description: 'The first 52 bits of the bounce event’s UUID: stable, at most 2^52 − 1' }),
  Type: Type.String(),
  TypeCode: Type.Integer(),
  Name: Type.String(),
  Tag: Type.String(),
  MessageID: Type.String(),
  ServerID: Type.Integer(),
  Description: Type.String(),
  Details: Type.String(),
  Email: Type.String(),
  From: Type.String(),
  BouncedAt: Type.String(),
  DumpAvailable: Type.Boolean(),
  Inactive: Type.Boolean(),
  CanActivate: Type.Boolean(),
  Subject: Type.String(),
  MessageStream: Type.String(),
});

const BounceParams = Type.Object({
  bounceId: Type.String({ pattern: '^[0-9]{1,20}$', description: 'A bounce ID (an integer)' }),
});

const DeliveryStats = Type.Object({
  InactiveMails: Type.Integer(),
  Bounces: Type.Array(Type.Object({ Type: Type.Optional(Type.String()), Name: Type.String(), Count: Type.Integer() })),
});

const NOT_FOUND = { 404: 'ErrorCode 701: no bounce of this ID in this organization' };

/**
 * A bounce in Postmark's fields (the domain's BOUNCE_TYPE_OF_KIND: a spam complaint is SpamComplaint, an automatic
 * reply AutoResponder, a DSN's delay notice Transient, a DSN's refusal as the conversation's). Inactive: suppressed
 * now; CanActivate: that suppression may be removed (a spam complaint's too, unlike at Postmark: removing a
 * suppression is the customer's call here, by the suppressions delete as by activate).
 */
function toWire(bounce: BounceRecord) {
  const type = BOUNCE_TYPE_OF_KIND[bounce.kind];
  return {
    RecordType: 'Bounce',
    ID: bounce.bounceId,
    Type: type.type,
    TypeCode: type.typeCode,
    Name: type.name,
    Tag: bounce.tag,
    MessageID: bounce.messageId,
    // One organization is one Postmark server here; there is no server id to show.
    ServerID: 0,
    Description: type.description,
    Details: bounce.smtpResponse || bounce.summary,
    Email: bounce.recipient,
    From: bounce.fromEmail,
    BouncedAt: new Date(bounce.bouncedAt).toISOString(),
    // No raw bounce is kept: a refusal in the SMTP conversation has none (its reply is in Details), and what came back
    // later is kept by the mail it came in (its report id), not yet served here; its diagnostic is in Details.
    DumpAvailable: false,
    Inactive: bounce.inactive,
    // Any suppression can be removed by a key with email:send (the suppressions delete, or activate below).
    CanActivate: bounce.inactive,
    Subject: bounce.subject,
    MessageStream: bounce.messageStream,
  };
}

function invalid(detail: string): ApiError {
  return new ApiError('InvalidEmailRequest', { detail });
}

export function bounceRoutes(deps: ApiDependencies) {
  const deletions = suppressionDeletions(deps);

  async function bounceOf(organizationId: string, bounceId: string): Promise<BounceRecord> {
    const found = await deps.bounces.byId(organizationId, Number(bounceId));
    if (!found) throw new ApiError('BounceNotFound', { bounceId });
    return found;
  }

  return async function (app: Api): Promise<void> {
    app.get(
      '/bounces',
      {
        config: { scope: 'email:read' },
        schema: {
          tags: ['bounces'],
          summary: 'Search bounces (last 30 days), newest first',
          querystring: SearchQuery,
          response: {
            200: Type.Object({ TotalCount: Type.Integer(), Bounces: Type.Array(Bounce) }),
            ...errorResponses([401, 403, 422, 503], {
              422: 'ErrorCode 300: a filter is invalid (count, offset, type, inactive, dates); ErrorCode 1235: a message stream other than outbound',
            }),
          },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const q = request.query;
        const count = q.count === undefined ? 100 : Number(q.count);
        const offset = q.offset === undefined ? 0 : Number(q.offset);
        if (count < 1 || count > MAX_COUNT) throw invalid(`count must be between 1 and ${MAX_COUNT}.`);
        for (const stream of [q.messagestream, q.messageStream]) {
          if (stream !== undefined && stream !== '') assertOutboundStream(stream);
        }
        const filters: BounceFilters = { count, offset };
        if (q.type) {
          const kinds = kindsOfBounceType(q.type);
          if (!kinds) throw invalid(`type '${q.type}' is not a bounce type (${POSTMARK_BOUNCE_TYPES.join(', ')}).`);
          filters.kinds = kinds;
        }
        if (q.inactive) {
          const inactive = q.inactive.trim().toLowerCase();
          if (inactive !== 'true' && inactive !== 'false') throw invalid(`inactive must be true or false.`);
          filters.inactive = inactive === 'true';
        }
        const emailContains = either(q.emailfilter, q.emailFilter);
        if (emailContains) filters.emailContains = emailContains;
        if (q.tag) filters.tag = q.tag;
        const messageId = either(q.messageid, q.messageID);
        if (messageId) filters.messageId = messageId;
        const fromDate = dateFilter('fromdate', either(q.fromdate, q.fromDate), false);
        const toDate = dateFilter('todate', either(q.todate, q.toDate), true);
        if (fromDate !== undefined) filters.fromDate = fromDate;
        if (toDate !== undefined) filters.toDate = toDate;
        const { total, bounces } = await deps.bounces.search(key.organizationId, filters);
        return { TotalCount: total, Bounces: bounces.map(toWire) };
      },
    );

    app.get(
      '/bounces/:bounceId',
      {
        config: { scope: 'email:read' },
        schema: {
          tags: ['bounces'],
          summary: 'One bounce',
          params: BounceParams,
          response: { 200: Bounce, ...errorResponses([401, 403, 404, 422, 503], NOT_FOUND) },
        },
      },
      async (request) => toWire(await bounceOf(requireKey(request).organizationId, request.params.bounceId)),
    );

    app.get(
      '/bounces/:bounceId/dump',
      {
        config: { scope: 'email:read' },
        schema: {
          tags: ['bounces'],
          summary: "A bounce's raw bounce message: always empty (no raw bounce is kept; see the bounce's Details)",
          params: BounceParams,
          response: {
            200: Type.Object({ Body: Type.String() }),
            ...errorResponses([401, 403, 404, 422, 503], NOT_FOUND),
          },
        },
      },
      async (request) => {
        await bounceOf(requireKey(request).organizationId, request.params.bounceId);
        // Postmark answers an empty Body when it has no dump for a bounce.
        return { Body: '' };
      },
    );

    app.put(
      '/bounces/:bounceId/activate',
      {
        config: { scope: 'email:send' },
        schema: {
          tags: ['bounces'],
          summary: "Reactivate a bounce's address: remove its suppression (as the suppressions delete does)",
          params: BounceParams,
          response: {
            200: Type.Object({ Message: Type.String(), Bounce }),
            ...errorResponses([401, 403, 404, 415, 422, 503], NOT_FOUND),
          },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const bounce = await bounceOf(key.organizationId, request.params.bounceId);
        // The suppression delete's rule: decided (and recorded) whether or not the address is suppressed now.
        await deletions.deleteOne(key.organizationId, bounce.recipient);
        return { Message: 'OK', Bounce: toWire({ ...bounce, inactive: false }) };
      },
    );

    const deliveryStats = {
      config: { scope: 'email:read' as const },
      schema: {
        tags: ['bounces'],
        summary: 'Suppressed addresses, and bounces per type (last 30 days)',
        response: { 200: DeliveryStats, ...errorResponses([401, 403, 503]) },
      },
    };
    const answerDeliveryStats = async (organizationId: string) => {
      const [inactive, counts] = await Promise.all([
        deps.suppressions.count(organizationId),
        deps.bounces.countsByKind(organizationId),
      ]);
      const all = BOUNCE_KINDS.reduce((sum, kind) => sum + counts[kind], 0);
      return {
        InactiveMails: inactive,
        Bounces: [
          { Name: 'All', Count: all },
          ...BOUNCE_KINDS.filter((kind) => counts[kind] > 0).map((kind) => ({
            Type: BOUNCE_TYPE_OF_KIND[kind].type,
            Name: BOUNCE_TYPE_OF_KIND[kind].name,
            Count: counts[kind],
          })),
        ],
      };
    };
    // Postmark documents /deliverystats; its 5.1.0 client asks for /deliveryStats.
    app.get('/deliverystats', deliveryStats, async (request) =>
      answerDeliveryStats(requireKey(request).organizationId),
    );
    app.get('/deliveryStats', { ...deliveryStats, schema: { ...deliveryStats.schema, hide: true } }, async (request) =>
      answerDeliveryStats(requireKey(request).organizationId),
    );
  };
}
