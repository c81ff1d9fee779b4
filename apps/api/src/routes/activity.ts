import type { ActivityFilters, AddressEntry, MessageSummary } from '@sendline/infra';
import { Type, type Static } from 'typebox';
import { requireKey } from '../auth';
import type { Api, ApiDependencies } from '../context';
import { ApiError } from '../errors';
import { assertOutboundStream } from '../messageStream';
import { documentedEnum, errorResponses } from '../openapi';

export const MAX_COUNT = 500;
/** 1 to 500 (leading zeros allowed); a number past that is refused by the schema, as any other count. */
export const Count = Type.String({
  pattern: '^0*([1-9][0-9]?|[1-4][0-9][0-9]|500)$',
  description: '1 to 500; default 100',
});
export const Offset = Type.String({ pattern: '^[0-9]{1,9}$', description: 'default 0' });
/** Postmark's `YYYY-MM-DD` (the whole day) or `YYYY-MM-DDTHH:MM:SS` (UTC unless a zone is given). */
export const DateFilter = Type.String({
  pattern:
    '^(|[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,3})?(Z|[+-]([01][0-9]|2[0-3]):?[0-5][0-9])?)?)$',
  description: 'YYYY-MM-DD (whole day, UTC) or YYYY-MM-DDTHH:MM:SS (UTC unless a zone is given)',
});
export const StreamFilter = documentedEnum(Type.String({ description: "Only 'outbound' (empty: no filter)" }), [
  'outbound',
  '',
]);

/** The period and stream filters every list and statistics query takes, in Postmark's two spellings. */
export const PeriodAndStreamFilters = {
  fromdate: Type.Optional(DateFilter),
  fromDate: Type.Optional(DateFilter),
  todate: Type.Optional(DateFilter),
  toDate: Type.Optional(DateFilter),
  messagestream: Type.Optional(StreamFilter),
  messageStream: Type.Optional(StreamFilter),
};

/** Postmark's documented lower-case names and the camelCase its clients send are both accepted. */
export const ListQuery = Type.Object(
  {
    count: Type.Optional(Count),
    offset: Type.Optional(Offset),
    recipient: Type.Optional(Type.String()),
    fromemail: Type.Optional(Type.String()),
    fromEmail: Type.Optional(Type.String()),
    tag: Type.Optional(Type.String()),
    status: Type.Optional(Type.String()),
    subject: Type.Optional(Type.String()),
    ...PeriodAndStreamFilters,
  },
  { additionalProperties: true },
);

const Recipient = Type.Object({ Email: Type.String(), Name: Type.String() });
const MessageFields = {
  MessageID: Type.String(),
  Tag: Type.String(),
  To: Type.Array(Recipient),
  Cc: Type.Array(Recipient),
  Bcc: Type.Array(Recipient),
  Recipients: Type.Array(Type.String()),
  ReceivedAt: Type.String(),
  From: Type.String(),
  Subject: Type.String(),
  Attachments: Type.Array(Type.String()),
  Status: Type.String(),
  TrackOpens: Type.Boolean(),
  TrackLinks: Type.String(),
  Metadata: Type.Record(Type.String(), Type.String()),
  MessageStream: Type.String(),
  Sandboxed: Type.Boolean(),
};
export const ListResponse = Type.Object({
  TotalCount: Type.Integer(),
  Messages: Type.Array(Type.Object(MessageFields)),
});
export const DetailsResponse = Type.Object({
  ...MessageFields,
  TextBody: Type.String(),
  HtmlBody: Type.String(),
  Body: Type.String(),
  Template: Type.Union([Type.Object({ TemplateId: Type.Integer(), Version: Type.Integer() }), Type.Null()], {
    description: 'Ours: the template the message was rendered from and its version; null for a plain send',
  }),
  ReplyTo: Type.String(),
  Headers: Type.Array(Type.Object({ Name: Type.String(), Value: Type.String() })),
  MessageEvents: Type.Array(
    Type.Object({
      Recipient: Type.String(),
      Type: Type.String(),
      ReceivedAt: Type.String(),
      Details: Type.Record(Type.String(), Type.String()),
    }),
  ),
});

export function dateFilter(name: string, value: string | undefined, endOfDay: boolean): number | undefined {
  if (value === undefined || value === '') return undefined;
  // Postmark takes "2026-11-01" or "2026-11-01T12:00:00" (UTC when no zone is given).
  const withZone = /^\d{4}-\d{2}-\d{2}$/.test(value)
    ? `${value}T${endOfDay ? '23:59:59.999' : '00:00:00.000'}Z`
    : /[zZ]|[+-]\d{2}:?\d{2}$/.test(value)
      ? value
      : `${value}Z`;
  const ms = Date.parse(withZone);
  if (Number.isNaN(ms))
    throw new ApiError('InvalidEmailRequest', {
      detail: `The ${name} filter '${value}' is not a date (use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS).`,
    });
  return ms;
}

/** The lower-case spelling of a filter, else the camelCase one; an empty value counts as absent. */
export const either = (lower: string | undefined, camel: string | undefined) => (lower ? lower : camel);

const mailbox = (entry: AddressEntry) => ({ Email: entry.email, Name: entry.name });
const formatFrom = (m: MessageSummary) =>
  m.fromName ? `"${m.fromName.replace(/"/g, '\\"')}" <${m.fromEmail}>` : m.fromEmail;

function toWire(m: MessageSummary) {
  return {
    MessageID: m.messageId,
    Tag: m.tag,
    To: m.to.map(mailbox),
    Cc: m.cc.map(mailbox),
    Bcc: m.bcc.map(mailbox),
    Recipients: m.recipients,
    ReceivedAt: new Date(m.receivedAt).toISOString(),
    From: formatFrom(m),
    Subject: m.subject,
    Attachments: m.attachmentNames,
    Status: m.status,
    TrackOpens: m.trackOpens,
    TrackLinks: m.trackLinks,
    Metadata: m.metadata,
    MessageStream: m.messageStream,
    Sandboxed: false,
  };
}

/**
 * The outbound message search of an organization: the query's filters checked and mapped, the answer in Postmark's
 * shape. GET /messages/outbound and the console's Activity page answer with it.
 */
export async function listOutbound(
  deps: Pick<ApiDependencies, 'activity'>,
  organizationId: string,
  q: Static<typeof ListQuery>,
): Promise<Static<typeof ListResponse>> {
  const count = q.count === undefined ? 100 : Number(q.count);
  const offset = q.offset === undefined ? 0 : Number(q.offset);
  if (count < 1 || count > MAX_COUNT) {
    throw new ApiError('InvalidEmailRequest', { detail: `count must be between 1 and ${MAX_COUNT}.` });
  }
  // Both spellings are checked: an empty one never hides a wrong other.
  for (const stream of [q.messagestream, q.messageStream]) {
    if (stream !== undefined && stream !== '') assertOutboundStream(stream);
  }
  const filters: ActivityFilters = { count, offset };
  const set = <K extends keyof ActivityFilters>(name: K, value: ActivityFilters[K] | undefined) => {
    if (value !== undefined && value !== '') filters[name] = value;
  };
  set('recipient', q.recipient);
  set('fromEmail', either(q.fromemail, q.fromEmail));
  set('tag', q.tag);
  set('status', q.status);
  set('subject', q.subject);
  set('fromDate', dateFilter('fromdate', either(q.fromdate, q.fromDate), false));
  set('toDate', dateFilter('todate', either(q.todate, q.toDate), true));
  const { total, messages } = await deps.activity.list(organizationId, filters);
  return { TotalCount: total, Messages: messages.map(toWire) };
}

/** One message of an organization with its bodies, headers and events; MessageNotFound for any other. */
export async function outboundDetails(
  deps: Pick<ApiDependencies, 'activity'>,
  organizationId: string,
  messageId: string,
): Promise<Static<typeof DetailsResponse>> {
  const details = await deps.activity.details(organizationId, messageId);
  if (!details) throw new ApiError('MessageNotFound', { messageId });
  return {
    ...toWire(details),
    TextBody: details.textBody,
    HtmlBody: details.htmlBody,
    Body: details.htmlBody || details.textBody,
    Template: details.template ? { TemplateId: details.template.templateId, Version: details.template.version } : null,
    ReplyTo: details.replyTo,
    Headers: details.headers.map((h) => ({ Name: h.name, Value: h.value })),
    MessageEvents: details.events.map((event) => ({
      Recipient: event.recipient,
      Type: event.type,
      ReceivedAt: new Date(event.occurredAt).toISOString(),
      Details: event.details,
    })),
  };
}

export function activityRoutes(deps: ApiDependencies) {
  return async function (app: Api): Promise<void> {
    app.get(
      '/messages/outbound',
      {
        config: { scope: 'email:read' },
        schema: {
          tags: ['activity'],
          summary: 'Search sent messages (last 30 days)',
          querystring: ListQuery,
          response: {
            200: ListResponse,
            ...errorResponses([401, 403, 422, 503], {
              422: 'ErrorCode 300: a filter is invalid; ErrorCode 1235: a message stream other than outbound',
            }),
          },
        },
      },
      async (request) => listOutbound(deps, requireKey(request).organizationId, request.query),
    );

    app.get(
      '/messages/outbound/:messageId/dump',
      {
        config: { scope: 'email:read' },
        schema: {
          tags: ['activity'],
          summary:
            'The MIME source of a message as composed and sent (rebuilt from its accepted event; without the DKIM-Signature header)',
          params: Type.Object({ messageId: Type.String() }),
          response: { 200: Type.Object({ Body: Type.String() }), ...errorResponses([401, 403, 404, 503]) },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const { messageId } = request.params;
        const source = await deps.dumps.dump(key.organizationId, messageId);
        if (!source) throw new ApiError('MessageNotFound', { messageId });
        return { Body: source.toString('utf8') };
      },
    );

    app.get(
      '/messages/outbound/:messageId/details',
      {
        config: { scope: 'email:read' },
        schema: {
          tags: ['activity'],
          summary: 'One message with its bodies and events',
          params: Type.Object({ messageId: Type.String() }),
          response: { 200: DetailsResponse, ...errorResponses([401, 403, 404, 503]) },
        },
      },
      async (request) => outboundDetails(deps, requireKey(request).organizationId, request.params.messageId),
    );
  };
}
