import { Resolver } from 'node:dns/promises';
import { authenticate } from 'mailauth';
import PostalMime, { decodeWords, type Address, type Attachment, type Email } from 'postal-mime';
import { DEFAULT_DNS_TIMEOUT_MS, type DnsResolverOptions } from '../dns/resolver';

/**
 * Reading one inbound message (mail for an organization's inbound address): postal-mime parses the MIME, mailauth
 * checks SPF, DKIM and DMARC. Total: it never throws; a message postal-mime refuses (over a limit, broken past
 * reading) comes back with `unparsed` (the reason) and only what the envelope says, and a check that could not be
 * made (DNS away) is mailauth's `temperror`.
 *
 * Limits: a message has at most INBOUND_MAIL_LIMITS.maxDelimiterLines lines that may delimit MIME parts (counted
 * before parsing; a 1,000-part message is read), parts nested at most maxNestingDepth deep, maxHeaderBytes of headers
 * in all. Attached messages are never parsed recursively (`forceRfc822Attachments`: each is one attachment), and
 * attachments are never unpacked (a zip of zips is its bytes).
 */
export const INBOUND_MAIL_LIMITS = {
  maxDelimiterLines: 5000,
  maxNestingDepth: 32,
  maxHeaderBytes: 1024 * 1024,
  /** How long the SPF, DKIM and DMARC checks of one message may take in all. */
  authenticationTimeoutMs: 10_000,
} as const;

export interface InboundMailbox {
  name: string;
  address: string;
}

export interface InboundAttachment {
  name: string;
  contentType: string;
  contentId: string;
  content: Uint8Array;
}

export interface ParsedInboundMail {
  /** Why the MIME could not be read; absent when it was. */
  unparsed?: string;
  /** Every header, in order, encoded words decoded. */
  headers: { name: string; value: string }[];
  from?: InboundMailbox;
  to: InboundMailbox[];
  cc: InboundMailbox[];
  bcc: InboundMailbox[];
  replyTo: InboundMailbox[];
  subject: string;
  /** The Date header as written. */
  date: string;
  text: string;
  html: string;
  attachments: InboundAttachment[];
}

/** SPF, DKIM and DMARC as mailauth found them, and the header lines it writes (Authentication-Results, Received-SPF). */
export interface InboundAuthentication {
  spf: string;
  dkim: string;
  dmarc: string;
  /** `Name: value` header lines, unfolded, to put first among the message's headers. */
  headers: { name: string; value: string }[];
}

export async function parseInboundMail(raw: Uint8Array): Promise<ParsedInboundMail> {
  const empty: ParsedInboundMail = {
    headers: [],
    to: [],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: '',
    date: '',
    text: '',
    html: '',
    attachments: [],
  };
  if (raw.length === 0) return { ...empty, unparsed: 'an empty message' };
  if (delimiterLines(raw) > INBOUND_MAIL_LIMITS.maxDelimiterLines) {
    return {
      ...empty,
      unparsed: `more than ${INBOUND_MAIL_LIMITS.maxDelimiterLines} lines that may delimit MIME parts`,
    };
  }
  let email: Email;
  try {
    email = await PostalMime.parse(raw, {
      forceRfc822Attachments: true,
      attachmentEncoding: 'arraybuffer',
      maxNestingDepth: INBOUND_MAIL_LIMITS.maxNestingDepth,
      maxHeadersSize: INBOUND_MAIL_LIMITS.maxHeaderBytes,
    });
  } catch (cause) {
    return {
      ...empty,
      unparsed: `the message cannot be parsed: ${cause instanceof Error ? cause.message : String(cause)}`,
    };
  }
  const headers = email.headers.map((header) => ({ name: header.originalKey, value: decoded(header.value) }));
  return {
    headers,
    ...(email.from?.address !== undefined && { from: { name: email.from.name, address: email.from.address } }),
    to: mailboxes(email.to),
    cc: mailboxes(email.cc),
    bcc: mailboxes(email.bcc),
    replyTo: mailboxes(email.replyTo),
    subject: email.subject ?? '',
    date: email.headers.find((header) => header.key === 'date')?.value ?? '',
    text: email.text ?? '',
    html: email.html ?? '',
    attachments: email.attachments.map(attachmentOf),
  };
}

/**
 * SPF (for the client address, HELO name and envelope sender), DKIM and DMARC of a received message, with lookups on
 * the given DNS servers (default: the system's). ARC and BIMI are not checked. A failure or a timeout of the
 * whole check is `temperror` everywhere, never a throw.
 */
export async function authenticateInboundMail(
  raw: Uint8Array,
  envelope: { remoteAddress: string; heloName: string; envelopeFrom: string },
  options: { mta: string; dns?: DnsResolverOptions },
): Promise<InboundAuthentication> {
  const resolver = resolverOf(options.dns);
  const resolve = (name: string, rrtype: string) => resolver.resolve(name, rrtype as 'TXT') as Promise<never>;
  const check = authenticate(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), {
    ip: envelope.remoteAddress.replace(/^::ffff:/, ''),
    helo: envelope.heloName,
    sender: envelope.envelopeFrom,
    mta: options.mta,
    resolver: resolve,
    disableArc: true,
    disableBimi: true,
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('no answer in time')), INBOUND_MAIL_LIMITS.authenticationTimeoutMs);
  });
  try {
    const result = await Promise.race([check, timeout]);
    const spf = result.spf ? String(result.spf.status?.result ?? 'none') : 'none';
    const dkim = String(result.dkim?.results?.[0]?.status?.result ?? 'none');
    const dmarc = result.dmarc ? String(result.dmarc.status?.result ?? 'none') : 'none';
    return { spf, dkim, dmarc, headers: headerLines(result.headers) };
  } catch (cause) {
    check.catch(() => undefined);
    const reason = cause instanceof Error ? cause.message : String(cause);
    return {
      spf: 'temperror',
      dkim: 'temperror',
      dmarc: 'temperror',
      headers: [
        {
          name: 'Authentication-Results',
          value: `${options.mta}; spf=temperror; dkim=temperror; dmarc=temperror (not checked: ${reason})`,
        },
      ],
    };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One resolver per DNS setting, kept: a resolver is a c-ares channel of its own, and making one (with its servers) for
 * every message cost the reader more CPU than the message's three lookups.
 */
const resolvers = new Map<string, Resolver>();
function resolverOf(dns: DnsResolverOptions | undefined): Resolver {
  const timeout = dns?.timeoutMs ?? DEFAULT_DNS_TIMEOUT_MS;
  const servers = dns?.servers ?? [];
  const key = `${timeout} ${servers.join(',')}`;
  let resolver = resolvers.get(key);
  if (!resolver) {
    resolver = new Resolver({ timeout, tries: 1 });
    if (servers.length > 0) resolver.setServers([...servers]);
    resolvers.set(key, resolver);
  }
  return resolver;
}

/** `Name: value\r\n continued` lines as { name, value }, unfolded. */
function headerLines(text: string): { name: string; value: string }[] {
  return text
    .split(/\r?\n(?![ \t])/)
    .filter((line) => line.includes(':'))
    .map((line) => {
      const colon = line.indexOf(':');
      return {
        name: line.slice(0, colon).trim(),
        value: line
          .slice(colon + 1)
          .replace(/\r?\n[ \t]+/g, ' ')
          .trim(),
      };
    });
}

function decoded(value: string): string {
  try {
    return decodeWords(value);
  } catch {
    return value;
  }
}

function mailboxes(addresses: Address[] | undefined): InboundMailbox[] {
  return (addresses ?? []).flatMap((address) =>
    address.group
      ? address.group.map((member) => ({ name: member.name, address: member.address }))
      : [{ name: address.name, address: address.address }],
  );
}

function attachmentOf(attachment: Attachment): InboundAttachment {
  const { content } = attachment;
  const bytes =
    typeof content === 'string'
      ? Buffer.from(content, attachment.encoding === 'base64' ? 'base64' : 'utf8')
      : content instanceof Uint8Array
        ? content
        : new Uint8Array(content);
  return {
    name: attachment.filename ?? '',
    contentType: attachment.mimeType,
    contentId: attachment.contentId ? attachment.contentId.replace(/^<|>$/g, '') : '',
    content: bytes,
  };
}

/**
 * How many lines start with `--` (a `--` at the start or after a CR or an LF), up to one more than the limit: each
 * found by Buffer's native indexOf rather than a loop over every byte of the message.
 */
export function delimiterLines(bytes: Uint8Array): number {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const limit = INBOUND_MAIL_LIMITS.maxDelimiterLines;
  let count = buffer[0] === 0x2d && buffer[1] === 0x2d ? 1 : 0;
  for (const marker of ['\n--', '\r--']) {
    for (let at = buffer.indexOf(marker); at >= 0 && count <= limit; at = buffer.indexOf(marker, at + 1)) count++;
  }
  return count;
}
