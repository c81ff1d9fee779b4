/**
 * The wire format: Postmark's PascalCase JSON for sending, activity and
 * suppressions, the service's own camelCase JSON for account endpoints.
 * Every answer goes through one explicit mapper that checks its shape.
 */
import { contentToBase64 } from './base64';
import { camelCaseJson, isObject, readArray, Reader, readString, ShapeError } from './read';
import type {
  BatchAccepted,
  BatchResult,
  Domain,
  DnsRecord,
  EmailMessage,
  ListEmailsResult,
  Mailbox,
  Me,
  Member,
  MessageEvent,
  OutboundMessage,
  OutboundMessageDetails,
  Recipients,
  SendResult,
  Suppression,
  SuppressionDeleteResult,
  TrackLinks,
} from './types';

// ---------------------------------------------------------------------------
// Requests

export interface WireHeader {
  Name: string;
  Value: string;
}

export interface WireAttachment {
  Name: string;
  Content: string;
  ContentType: string;
  ContentID?: string;
}

export interface WireMessage {
  From: string;
  To: string;
  Cc?: string;
  Bcc?: string;
  Subject?: string;
  TextBody?: string;
  HtmlBody?: string;
  ReplyTo?: string;
  Tag?: string;
  Headers?: WireHeader[];
  Metadata?: Record<string, string>;
  Attachments?: WireAttachment[];
  TrackOpens?: boolean;
  TrackLinks?: TrackLinks;
  MessageStream?: string;
}

export interface WireSuppressionDeleteRequest {
  Suppressions: { EmailAddress: string }[];
}

function joinRecipients(recipients: Recipients): string {
  return typeof recipients === 'string' ? recipients : recipients.join(', ');
}

export function toWireMessage(message: EmailMessage): WireMessage {
  const wire: WireMessage = { From: message.from, To: joinRecipients(message.to) };
  if (message.cc !== undefined) wire.Cc = joinRecipients(message.cc);
  if (message.bcc !== undefined) wire.Bcc = joinRecipients(message.bcc);
  if (message.subject !== undefined) wire.Subject = message.subject;
  if (message.textBody !== undefined) wire.TextBody = message.textBody;
  if (message.htmlBody !== undefined) wire.HtmlBody = message.htmlBody;
  if (message.replyTo !== undefined) wire.ReplyTo = joinRecipients(message.replyTo);
  if (message.tag !== undefined) wire.Tag = message.tag;
  if (message.headers !== undefined) {
    const headers = message.headers;
    wire.Headers = isHeaderList(headers)
      ? headers.map((h) => ({ Name: h.name, Value: h.value }))
      : Object.entries(headers).map(([Name, Value]) => ({ Name, Value }));
  }
  if (message.metadata !== undefined) wire.Metadata = { ...message.metadata };
  if (message.attachments !== undefined) {
    wire.Attachments = message.attachments.map((a) => {
      const part: WireAttachment = {
        Name: a.filename,
        Content: contentToBase64(a.content),
        ContentType: a.contentType,
      };
      if (a.contentId !== undefined) part.ContentID = a.contentId;
      return part;
    });
  }
  if (message.trackOpens !== undefined) wire.TrackOpens = message.trackOpens;
  if (message.trackLinks !== undefined) wire.TrackLinks = message.trackLinks;
  if (message.messageStream !== undefined) wire.MessageStream = message.messageStream;
  return wire;
}

function isHeaderList(headers: EmailMessage['headers']): headers is readonly { name: string; value: string }[] {
  return Array.isArray(headers);
}

export function toWireSuppressionDelete(addresses: readonly string[]): WireSuppressionDeleteRequest {
  return { Suppressions: addresses.map((EmailAddress) => ({ EmailAddress })) };
}

// ---------------------------------------------------------------------------
// Answers: sending

/** `{ To, SubmittedAt, MessageID, ErrorCode, Message }` (+ `Cc`, `Bcc`) → SendResult. */
export function fromWireSendResult(value: unknown, path = ''): SendResult {
  const r = Reader.of(value, path);
  const result: SendResult = {
    to: r.string('To'),
    submittedAt: r.string('SubmittedAt'),
    messageId: r.string('MessageID'),
    errorCode: r.number('ErrorCode'),
    message: r.string('Message'),
  };
  const cc = r.optionalString('Cc');
  const bcc = r.optionalString('Bcc');
  if (cc !== undefined) result.cc = cc;
  if (bcc !== undefined) result.bcc = bcc;
  return result;
}

/** One entry of a batch answer: ErrorCode 0 → accepted, anything else → refused. */
export function fromWireBatchEntry(value: unknown, path: string): BatchResult {
  const r = Reader.of(value, path);
  const errorCode = r.number('ErrorCode');
  const message = r.string('Message');
  if (errorCode !== 0) return { ok: false, errorCode, message };
  const { to, cc, bcc, submittedAt, messageId } = fromWireSendResult(value, path);
  const accepted: BatchAccepted = { ok: true, messageId, submittedAt, to, message };
  if (cc !== undefined) accepted.cc = cc;
  if (bcc !== undefined) accepted.bcc = bcc;
  return accepted;
}

export function fromWireBatch(value: unknown, expectedLength: number): BatchResult[] {
  const results = readArray(value, '', fromWireBatchEntry);
  if (results.length !== expectedLength) {
    throw new ShapeError('', `an array of ${expectedLength} results (one per message), got ${results.length}`);
  }
  return results;
}

// ---------------------------------------------------------------------------
// Answers: activity

function fromWireMailbox(value: unknown, path: string): Mailbox {
  const r = Reader.of(value, path);
  return { email: r.string('Email'), name: r.nullableString('Name') };
}

const TRACK_LINKS: readonly TrackLinks[] = ['None', 'HtmlAndText', 'HtmlOnly', 'TextOnly'];

function readOutboundMessage(r: Reader): OutboundMessage {
  return {
    messageId: r.string('MessageID'),
    tag: r.nullableString('Tag'),
    to: r.array('To', fromWireMailbox),
    cc: r.arrayOr('Cc', fromWireMailbox),
    bcc: r.arrayOr('Bcc', fromWireMailbox),
    recipients: r.array('Recipients', readString),
    receivedAt: r.string('ReceivedAt'),
    from: r.string('From'),
    subject: r.stringOr('Subject', ''),
    attachments: r.arrayOr('Attachments', readString),
    status: r.string('Status'),
    trackOpens: r.booleanOr('TrackOpens', false),
    trackLinks: r.has('TrackLinks') ? r.oneOf('TrackLinks', TRACK_LINKS) : 'None',
    metadata: r.stringMapOr('Metadata'),
    messageStream: r.stringOr('MessageStream', 'outbound'),
    sandboxed: r.booleanOr('Sandboxed', false),
  };
}

export function fromWireOutboundMessage(value: unknown, path: string): OutboundMessage {
  return readOutboundMessage(Reader.of(value, path));
}

/** `{ TotalCount, Messages }` → ListEmailsResult. */
export function fromWireMessageList(value: unknown): ListEmailsResult {
  const r = Reader.of(value, '');
  return { totalCount: r.number('TotalCount'), messages: r.array('Messages', fromWireOutboundMessage) };
}

function fromWireMessageEvent(value: unknown, path: string): MessageEvent {
  const r = Reader.of(value, path);
  const details = r.has('Details') ? camelCaseJson(r.raw('Details'), `${path}.Details`) : {};
  if (!isObject(details)) throw new ShapeError(`${path}.Details`, 'an object');
  return {
    recipient: r.string('Recipient'),
    type: r.string('Type'),
    receivedAt: r.string('ReceivedAt'),
    details,
  };
}

/** `/messages/outbound/{id}/details` → OutboundMessageDetails. */
export function fromWireMessageDetails(value: unknown): OutboundMessageDetails {
  const r = Reader.of(value, '');
  return {
    ...readOutboundMessage(r),
    textBody: r.nullableString('TextBody'),
    htmlBody: r.nullableString('HtmlBody'),
    body: r.nullableString('Body'),
    messageEvents: r.arrayOr('MessageEvents', fromWireMessageEvent),
  };
}

// ---------------------------------------------------------------------------
// Answers: suppressions

function fromWireSuppression(value: unknown, path: string): Suppression {
  const r = Reader.of(value, path);
  return {
    emailAddress: r.string('EmailAddress'),
    suppressionReason: r.string('SuppressionReason'),
    origin: r.string('Origin'),
    createdAt: r.string('CreatedAt'),
  };
}

/** `{ Suppressions: [...] }` (a bare array is accepted too) → Suppression[]. */
export function fromWireSuppressionDump(value: unknown): Suppression[] {
  if (Array.isArray(value)) return readArray(value, '', fromWireSuppression);
  return Reader.of(value, '').array('Suppressions', fromWireSuppression);
}

function fromWireSuppressionDeleteEntry(value: unknown, path: string): SuppressionDeleteResult {
  const r = Reader.of(value, path);
  return {
    emailAddress: r.string('EmailAddress'),
    status: r.oneOf('Status', ['Deleted', 'Failed']),
    message: r.nullableString('Message'),
  };
}

/** `{ Suppressions: [{ EmailAddress, Status, Message }] }` → SuppressionDeleteResult[]. */
export function fromWireSuppressionDelete(value: unknown): SuppressionDeleteResult[] {
  return Reader.of(value, '').array('Suppressions', fromWireSuppressionDeleteEntry);
}

// ---------------------------------------------------------------------------
// Answers: account endpoints (already camelCase; checked, then rebuilt field by field)

export function fromMe(value: unknown): Me {
  const r = Reader.of(value, '');
  const org = r.object('organization');
  const key = r.object('key');
  return {
    organization: { id: org.string('id'), name: org.string('name') },
    key: {
      id: key.string('id'),
      name: key.string('name'),
      mode: key.oneOf('mode', ['test', 'live']),
      scopes: key.array('scopes', readString),
      prefix: key.string('prefix'),
    },
  };
}

function fromDnsRecord(value: unknown, path: string): DnsRecord {
  const r = Reader.of(value, path);
  return {
    type: r.string('type'),
    name: r.string('name'),
    value: r.string('value'),
    purpose: r.string('purpose'),
    state: r.string('state'),
  };
}

function fromDomain(value: unknown, path: string): Domain {
  const r = Reader.of(value, path);
  return {
    name: r.string('name'),
    verified: r.boolean('verified'),
    verifiedAt: r.nullableString('verifiedAt'),
    dnsRecords: r.array('dnsRecords', fromDnsRecord),
  };
}

/** `{ domains: [...] }` → Domain[]. */
export function fromDomains(value: unknown): Domain[] {
  return Reader.of(value, '').array('domains', fromDomain);
}

function fromMember(value: unknown, path: string): Member {
  const r = Reader.of(value, path);
  return { email: r.string('email'), role: r.string('role'), addedAt: r.string('addedAt') };
}

/** `{ members: [...] }` → Member[]. */
export function fromMembers(value: unknown): Member[] {
  return Reader.of(value, '').array('members', fromMember);
}
