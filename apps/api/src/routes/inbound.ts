import { INBOUND_STATUSES, type InboundMessageSummary, type InboundQuery } from '@sendline/application';
import { Type, type Static } from 'typebox';
import { requireKey } from '../auth';
import type { Api, ApiDependencies } from '../context';
import { ApiError } from '../errors';
import { documentedEnum, errorResponses } from '../openapi';
import { Count, DateFilter, dateFilter, either, MAX_COUNT, Offset } from './activity';

/**
 * Postmark's inbound messages API (`/messages/inbound`): search, details, retry a failed posting, bypass the rules
 * for a blocked message. The messages are the activity store's (30 days); their status is Blocked, or the outcome
 * of the message's posting to the InboundHookUrl (Queued, Scheduled, Processed, Failed: the webhooks' delivery log).
 */

export const SearchQuery = Type.Object(
  {
    count: Type.Optional(Count),
    offset: Type.Optional(Offset),
    recipient: Type.Optional(Type.String({ description: 'An address among To, Cc or the inbound address it came to' })),
    fromemail: Type.Optional(Type.String({ description: 'The sender' })),
    fromEmail: Type.Optional(Type.String()),
    tag: Type.Optional(Type.String()),
    subject: Type.Optional(Type.String({ description: 'A part of the subject' })),
    mailboxhash: Type.Optional(Type.String()),
    mailboxHash: Type.Optional(Type.String()),
    status: Type.Optional(
      documentedEnum(Type.String({ description: 'blocked, processed, queued, failed or scheduled' }), [
        'blocked',
        'processed',
        'queued',
        'failed',
        'scheduled',
        '',
      ]),
    ),
    fromdate: Type.Optional(DateFilter),
    fromDate: Type.Optional(DateFilter),
    todate: Type.Optional(DateFilter),
    toDate: Type.Optional(DateFilter),
  },
  { additionalProperties: true },
);

const Recipient = Type.Object({ Email: Type.String(), Name: Type.String(), MailboxHash: Type.String() });
const Attachment = Type.Object({
  Name: Type.String(),
  ContentType: Type.String(),
  ContentLength: Type.Integer(),
  ContentID: Type.String(),
});
const Summary = {
  From: Type.String(),
  FromName: Type.String(),
  FromFull: Recipient,
  To: Type.String(),
  ToFull: Type.Array(Recipient),
  Cc: Type.String(),
  CcFull: Type.Array(Recipient),
  Bcc: Type.String(),
  BccFull: Type.Array(Recipient),
  ReplyTo: Type.String(),
  OriginalRecipient: Type.String(),
  Subject: Type.String(),
  Date: Type.String(),
  MailboxHash: Type.String(),
  Tag: Type.String(),
  MessageID: Type.String(),
  Status: Type.String({ description: 'Queued, Blocked, Processed, Scheduled or Failed' }),
  MessageStream: Type.String(),
};
export const ListedMessage = Type.Object({ ...Summary, Attachments: Type.Array(Attachment) });
export const SearchResponse = Type.Object({ TotalCount: Type.Integer(), InboundMessages: Type.Array(ListedMessage) });
export const DetailedMessage = Type.Object(
  {
    ...Summary,
    TextBody: Type.String(),
    HtmlBody: Type.String(),
    StrippedTextReply: Type.String(),
    Headers: Type.Array(Type.Object({ Name: Type.String(), Value: Type.String() })),
    Attachments: Type.Array(Type.Object({ ...Attachment.properties, Content: Type.String() })),
    RawEmail: Type.Optional(Type.String()),
    BlockedReason: Type.String(),
    ReceivedAt: Type.String({ description: 'Ours: when our MX took it' }),
  },
  { additionalProperties: true },
);

const IdParams = Type.Object({ id: Type.String({ description: "The inbound message's MessageID" }) });
const Answer = Type.Object({ ErrorCode: Type.Integer(), Message: Type.String() });
const NOT_FOUND = { 404: 'ErrorCode 701: no inbound message with this MessageID in the organization' };

type Payload = Record<string, unknown> & { Attachments?: Record<string, unknown>[] };

function payloadOf(message: InboundMessageSummary): Payload {
  try {
    return JSON.parse(message.payload) as Payload;
  } catch {
    return {};
  }
}

function summaryOf(message: InboundMessageSummary, payload: Payload) {
  const str = (name: string) => (typeof payload[name] === 'string' ? (payload[name] as string) : '');
  const list = (name: string) =>
    Array.isArray(payload[name]) ? (payload[name] as { Email: string; Name: string; MailboxHash: string }[]) : [];
  const fromFull = (payload.FromFull as { Email: string; Name: string; MailboxHash: string } | undefined) ?? {
    Email: message.from,
    Name: message.fromName,
    MailboxHash: '',
  };
  return {
    From: message.from,
    FromName: message.fromName,
    FromFull: fromFull,
    To: message.to,
    ToFull: list('ToFull'),
    Cc: message.cc,
    CcFull: list('CcFull'),
    Bcc: str('Bcc'),
    BccFull: list('BccFull'),
    ReplyTo: str('ReplyTo'),
    OriginalRecipient: message.originalRecipient,
    Subject: message.subject,
    Date: str('Date'),
    MailboxHash: message.mailboxHash,
    Tag: message.tag,
    MessageID: message.messageId,
    Status: message.statusNow,
    MessageStream: 'inbound',
  };
}

export function validId(id: string): string {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) {
    throw new ApiError('InboundMessageNotFound', { messageId: id });
  }
  return id.toLowerCase();
}

/** Postmark's inbound search for an organization (the public route's and the console's). */
export async function searchInbound(
  deps: ApiDependencies,
  organizationId: string,
  q: Static<typeof SearchQuery>,
): Promise<Static<typeof SearchResponse>> {
  const inbound = deps.inboundMessages;
  const count = q.count === undefined ? 100 : Number(q.count);
  const offset = q.offset === undefined ? 0 : Number(q.offset);
  if (count < 1 || count > MAX_COUNT) {
    throw new ApiError('InvalidEmailRequest', { detail: `count must be between 1 and ${MAX_COUNT}.` });
  }
  const query: InboundQuery = { count, offset };
  if (q.recipient) query.recipient = q.recipient;
  const fromEmail = either(q.fromemail, q.fromEmail);
  if (fromEmail) query.fromEmail = fromEmail;
  if (q.tag) query.tag = q.tag;
  if (q.subject) query.subject = q.subject;
  const mailboxHash = either(q.mailboxhash, q.mailboxHash);
  if (mailboxHash) query.mailboxHash = mailboxHash;
  if (q.status) {
    const status = INBOUND_STATUSES.find((s) => s.toLowerCase() === q.status!.toLowerCase());
    if (!status) {
      throw new ApiError('InvalidEmailRequest', {
        detail: `status '${q.status}' is not one of blocked, processed, queued, failed, scheduled.`,
      });
    }
    query.status = status;
  }
  const from = dateFilter('fromdate', either(q.fromdate, q.fromDate), false);
  const to = dateFilter('todate', either(q.todate, q.toDate), true);
  if (from !== undefined) query.from = from;
  if (to !== undefined) query.to = to + 1;
  const { total, messages } = await inbound.search(organizationId, query);
  return {
    TotalCount: total,
    InboundMessages: messages.map((message) => {
      const payload = payloadOf(message);
      return {
        ...summaryOf(message, payload),
        Attachments: (payload.Attachments ?? []).map((a) => ({
          Name: String(a.Name ?? ''),
          ContentType: String(a.ContentType ?? ''),
          ContentLength: Number(a.ContentLength ?? 0),
          ContentID: String(a.ContentID ?? ''),
        })),
      };
    }),
  };
}

/** One inbound message as posted, with its Status (the public route's and the console's). */
export async function inboundDetails(
  deps: ApiDependencies,
  organizationId: string,
  id: string,
): Promise<Static<typeof DetailedMessage>> {
  const inbound = deps.inboundMessages;
  const message = await inbound.details(organizationId, validId(id));
  const payload = payloadOf(message);
  return {
    ...payload,
    ...summaryOf(message, payload),
    TextBody: typeof payload.TextBody === 'string' ? payload.TextBody : '',
    HtmlBody: typeof payload.HtmlBody === 'string' ? payload.HtmlBody : '',
    StrippedTextReply: typeof payload.StrippedTextReply === 'string' ? payload.StrippedTextReply : '',
    Headers: Array.isArray(payload.Headers) ? (payload.Headers as { Name: string; Value: string }[]) : [],
    Attachments: (payload.Attachments ?? []) as {
      Name: string;
      Content: string;
      ContentType: string;
      ContentLength: number;
      ContentID: string;
    }[],
    BlockedReason: message.statusNow === 'Blocked' ? message.blockedReason : '',
    ReceivedAt: new Date(message.receivedAt).toISOString(),
  };
}

export function inboundRoutes(deps: ApiDependencies) {
  const inbound = deps.inboundMessages;
  return async function (app: Api): Promise<void> {
    app.get(
      '/messages/inbound',
      {
        config: { scope: 'email:read' },
        schema: {
          tags: ['inbound'],
          summary: 'Search the inbound messages, newest first',
          querystring: SearchQuery,
          response: {
            200: SearchResponse,
            ...errorResponses([401, 403, 422, 503], {
              422: 'ErrorCode 300: a filter is invalid (count, offset, status, dates)',
            }),
          },
        },
      },
      async (request) => {
        return searchInbound(deps, requireKey(request).organizationId, request.query);
      },
    );

    app.get(
      '/messages/inbound/:id/details',
      {
        config: { scope: 'email:read' },
        schema: {
          tags: ['inbound'],
          summary: "One inbound message: Postmark's JSON as posted, its Status and BlockedReason",
          params: IdParams,
          response: { 200: DetailedMessage, ...errorResponses([401, 403, 404, 503], NOT_FOUND) },
        },
      },
      async (request) => {
        return inboundDetails(deps, requireKey(request).organizationId, request.params.id);
      },
    );

    app.put(
      '/messages/inbound/:id/retry',
      {
        config: { scope: 'webhooks:manage' },
        schema: {
          tags: ['inbound'],
          summary: 'Post a failed inbound message to the InboundHookUrl again',
          params: IdParams,
          response: {
            200: Answer,
            ...errorResponses([401, 403, 404, 422, 503], {
              ...NOT_FOUND,
              422: 'ErrorCode 1621: the message has not failed',
            }),
          },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const id = validId(request.params.id);
        await inbound.retry(key.organizationId, id);
        return { ErrorCode: 0, Message: `Successfully rescheduled failed message: ${id}.` };
      },
    );

    app.put(
      '/messages/inbound/:id/bypass',
      {
        config: { scope: 'webhooks:manage' },
        schema: {
          tags: ['inbound'],
          summary: 'Let a blocked inbound message through: it is posted now',
          params: IdParams,
          response: {
            200: Answer,
            ...errorResponses([401, 403, 404, 422, 503], {
              ...NOT_FOUND,
              422: 'ErrorCode 1620: the message is not blocked',
            }),
          },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const id = validId(request.params.id);
        await inbound.bypass(key.organizationId, id);
        return { ErrorCode: 0, Message: `Successfully bypassed message: ${id}.` };
      },
    );
  };
}
