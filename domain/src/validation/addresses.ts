import emailAddresses from 'email-addresses';

/**
 * Email addresses: the one rule set for every address the service takes (recipients, senders, suppressions,
 * members), parsed by the `email-addresses` package (RFC 5322 address lists with display names,
 * RFC 6532 UTF-8), then held to what a sending service can deliver to:
 *
 * - no CR or LF anywhere in the input (RFC 5322 folding is legal in a header, never in a JSON field);
 * - a mailbox, not a group (`Team: a@x.com, b@y.com;` is refused, the members are not guessed);
 * - a domain name with at least two labels (no bare host, no `[127.0.0.1]` literal), each label
 *   1..63 characters of letters, digits, '-' (or non-ASCII, for internationalized names), not starting
 *   or ending with '-', the whole ≤ 253 characters;
 * - a local part ≤ 64 characters, the address ≤ 254.
 *
 * Comments (`j(comment)@x.com`) are dropped, as the parser does. An address keeps the case it was given
 * (for display); its canonical form, used for suppressions and recipient identity, is all lowercase.
 */

/** A mailbox: an address and an optional display name. */
export interface Mailbox {
  email: string;
  name?: string;
}

/** The one answer shape of the address rules: the value, or why the input is refused. */
export type AddressResult<T> = { ok: true; value: T } | { ok: false; reason: string };

const MAX_ADDRESS_LENGTH = 254;
const MAX_LOCAL_PART_LENGTH = 64;
const MAX_DOMAIN_LENGTH = 253;
const DOMAIN_LABEL = /^[a-z0-9\u0080-\uffff](?:[a-z0-9\u0080-\uffff-]{0,61}[a-z0-9\u0080-\uffff])?$/i;
const CR_OR_LF = /[\r\n]/;

/** The canonical form of an address: trimmed and lowercased. Suppressions and recipients are keyed by it. */
export function canonicalAddress(email: string): string {
  return email.trim().toLowerCase();
}

/** The lowercased domain of an address (the part after the last '@'). */
export function addressDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

function checkParsedMailbox(local: string, domain: string, address: string): string | undefined {
  if (address.length > MAX_ADDRESS_LENGTH) return `is longer than ${MAX_ADDRESS_LENGTH} characters`;
  if (local.length > MAX_LOCAL_PART_LENGTH) return `has a local part longer than ${MAX_LOCAL_PART_LENGTH} characters`;
  if (domain.startsWith('[')) return 'has an address literal as its domain; a domain name is required';
  if (domain.length > MAX_DOMAIN_LENGTH) return `has a domain longer than ${MAX_DOMAIN_LENGTH} characters`;
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((label) => DOMAIN_LABEL.test(label))) {
    return `has an invalid domain "${domain}"`;
  }
  return undefined;
}

const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\uffff-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\uffff-]+)*$/;

/**
 * The parser hands back the local part's meaning (`quoted local`, quotes removed): written out again as a
 * dot-atom when it is one, else as a quoted string, so the address can be used in SMTP and headers as is.
 */
function formatAddress(local: string, domain: string): string {
  const localPart = DOT_ATOM.test(local) ? local : `"${local.replace(/(["\\])/g, '\\$1')}"`;
  return `${localPart}@${domain}`;
}

const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]";
const LDH_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/**
 * The common case, a bare ASCII address (`ann.lee+receipts@mail.example.com`): a dot-atom local part, '@', and a
 * domain name of two or more letter-digit-hyphen labels. No space, quote, comment, angle bracket or comma: the
 * RFC 5322 parser would answer with this very address, so it is not asked (see `parseAddressList`).
 */
const PLAIN_ADDRESS = new RegExp(`^(${ATEXT}+(?:\\.${ATEXT}+)*)@((?:${LDH_LABEL}\\.)+${LDH_LABEL})$`);

function quote(input: string): string {
  const shown = input.length > 100 ? `${input.slice(0, 100)}…` : input;
  return JSON.stringify(shown);
}

/**
 * Parses one header-style address list: "a@x.com, B <b@y.com>", "\"Doe, John\" <j@x.com>".
 * An empty or blank string is refused (the caller decides whether the field may be absent).
 *
 * The RFC 5322 parser costs about 20 µs for a bare address (warm; more with display names and lists); a bare ASCII
 * address, the usual recipient, is answered without it in about 1 µs, with the very answer the parser gives. The
 * answer depends on the input alone, so a caller that sees the same lists again and again (a batch repeats its From
 * hundreds of times) may remember answers: see `AddressListParser`. The domain keeps no cache of its own.
 */
export function parseAddressList(input: string): AddressResult<Mailbox[]> {
  // A bare ASCII address within the length limits is its own answer; anything else, or a refusal, is the parser's.
  const plain = PLAIN_ADDRESS.exec(input);
  if (plain && checkParsedMailbox(plain[1]!, plain[2]!, input) === undefined) {
    return { ok: true, value: [{ email: input }] };
  }
  return parseAddressListByRfc5322(input);
}

/** `parseAddressList` without its shortcut for a bare ASCII address: every input through the RFC 5322 parser. */
export function parseAddressListByRfc5322(input: string): AddressResult<Mailbox[]> {
  if (CR_OR_LF.test(input)) return { ok: false, reason: `${quote(input)} contains a line break` };
  if (input.trim() === '') return { ok: false, reason: 'is empty' };
  const parsed = emailAddresses({ input, startAt: 'address-list', rfc6532: true, rejectTLD: true });
  if (!parsed || parsed.addresses.length === 0) {
    return { ok: false, reason: `${quote(input)} is not a valid email address or comma-separated list of addresses` };
  }
  const mailboxes: Mailbox[] = [];
  for (const entry of parsed.addresses) {
    if (entry.type !== 'mailbox') {
      return {
        ok: false,
        reason: `${quote(input)} contains the address group "${entry.name}", which is not supported`,
      };
    }
    const email = formatAddress(entry.local, entry.domain);
    const problem = checkParsedMailbox(entry.local, entry.domain, email);
    if (problem) return { ok: false, reason: `"${email}" ${problem}` };
    mailboxes.push(entry.name ? { email, name: entry.name } : { email });
  }
  return { ok: true, value: mailboxes };
}

/**
 * Anything that answers as `parseAddressList` does, e.g. a cache in front of it. The value it returns is the
 * caller's to keep: a cache hands out copies.
 */
export type AddressListParser = (input: string) => AddressResult<Mailbox[]>;

/**
 * One bare address (`a@x.com`, no display name, no list), held to the same rules as a recipient: a
 * suppression's address, a member's email. Returns the canonical (lowercased) address, or why it is not one;
 * the reason names the field `EmailAddress`, as the suppression endpoints call it.
 */
export function parseEmailAddress(input: unknown): AddressResult<string> {
  const fail = (reason: string): AddressResult<string> => ({ ok: false, reason });
  if (typeof input !== 'string') return fail(`EmailAddress must be a string, not ${describeType(input)}`);
  const list = parseAddressList(input);
  if (!list.ok) return fail(`EmailAddress ${list.reason}`);
  const [only, ...rest] = list.value;
  if (!only || rest.length > 0) return fail(`EmailAddress ${quote(input)} must be exactly one address`);
  if (only.name !== undefined || input.includes('<')) {
    return fail(`EmailAddress ${quote(input)} must be a bare address, without a display name or angle brackets`);
  }
  return { ok: true, value: canonicalAddress(only.email) };
}

/** How a JSON value is named in error messages. */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}
