import { DomainError } from '../domainError';
import { normalizeDomainName } from './rules';

/**
 * The DNS records an organization publishes for a sending domain, the ownership check and the return path's check.
 *
 * The domain layer never resolves names: the caller looks the records up and hands them to the VerifyDomain and
 * VerifyReturnPath commands; these functions only build and compare strings.
 */

export type DnsRecordPurpose = 'ownership' | 'mx' | 'spf' | 'dkim' | 'dmarc';

export interface DnsRecord {
  type: 'TXT' | 'MX';
  /** Fully qualified owner name, without trailing dot. */
  name: string;
  /**
   * TXT: the logical string (a DKIM key is longer than 255 octets; DNS consoles split it into
   * several character-strings, which resolvers hand back as chunks to be joined). MX: the exchange host.
   */
  value: string;
  /** MX only. */
  priority?: number;
  purpose: DnsRecordPurpose;
}

export const VERIFICATION_RECORD_LABEL = '_sendline';
export const MX_PRIORITY = 10;

/** Where the ownership TXT record lives: `_sendline.<domain>`. */
export function verificationRecordName(domain: string): string {
  return `${VERIFICATION_RECORD_LABEL}.${domain}`;
}

/** The ownership TXT record's value: `sendline-verification=<token>`. */
export function verificationRecordValue(verificationToken: string): string {
  return `sendline-verification=${verificationToken}`;
}

/** A TXT record as a resolver returns it: one string, or its character-strings (joined without separator). */
export type TxtRecord = string | readonly string[];

export function joinTxtRecord(record: TxtRecord): string {
  return typeof record === 'string' ? record : record.join('');
}

/** Whether one of the TXT records found at `_sendline.<domain>` is exactly the expected ownership value. */
export function hasVerificationRecord(txtRecords: readonly TxtRecord[], verificationToken: string): boolean {
  const expected = verificationRecordValue(verificationToken);
  return txtRecords.some((record) => joinTxtRecord(record) === expected);
}

const PEM = /^-----BEGIN ([A-Z ]+)-----([\s\S]*?)-----END \1-----\s*$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The DKIM `p=` value: the base64 of the DER SubjectPublicKeyInfo, from a PEM `PUBLIC KEY` block
 * (what `openssl rsa -pubout` and node's `generateKeyPairSync('rsa', { publicKeyEncoding: { type: 'spki' } })`
 * write) or from bare base64. Throws DomainError 'InvalidDkimPublicKey'.
 */
export function dkimPublicKeyBase64(publicKey: string): string {
  const invalid = (why: string) => new DomainError('InvalidDkimPublicKey', `invalid DKIM public key: ${why}`);
  if (typeof publicKey !== 'string') throw invalid('it must be a string');
  const trimmed = publicKey.trim();
  let body = trimmed;
  if (trimmed.startsWith('-----BEGIN')) {
    const pem = PEM.exec(trimmed);
    if (!pem) throw invalid('malformed PEM');
    if (pem[1] !== 'PUBLIC KEY') throw invalid(`expected a PEM PUBLIC KEY block (SPKI), got ${pem[1]}`);
    body = pem[2] ?? '';
  }
  const base64 = body.replace(/\s+/g, '');
  if (base64.length === 0 || base64.length % 4 !== 0 || !BASE64.test(base64)) throw invalid('not base64');
  return base64;
}

/** The fields of a domain that its records depend on. */
export interface DomainDnsIdentity {
  verificationToken: string;
  dkimSelector: string;
  dkimPublicKey: string;
  /** null or absent: a domain added before return paths existed, not assigned one yet (no MX or SPF to publish). */
  returnPath?: { host: string } | null;
}

/** The service's own names that a domain's records point to (the service's settings, handed in by the caller). */
export interface ServiceDnsNames {
  /** The mail host of every return path's MX, where bounces and complaints come back (SENDLINE_MAIL_HOST). */
  mailHost: string;
  /**
   * The domain whose own SPF record lists the addresses the service sends from, named by every return path's
   * `include:` (SENDLINE_SPF_DOMAIN; by default the mail host).
   */
  spfDomain: string;
}

/** A service name in lower case, checked; DomainError 'InvalidMailHost' naming the setting otherwise. */
function serviceName(value: string, what: string): string {
  try {
    return normalizeDomainName(value);
  } catch {
    throw new DomainError('InvalidMailHost', `the ${what} ${JSON.stringify(value)} is not a valid host name`);
  }
}

/** The SPF record a return path publishes: only the service may send with it as the envelope sender's domain. */
export function returnPathSpfValue(spfDomain: string): string {
  return `v=spf1 include:${spfDomain} -all`;
}

/**
 * The records to publish for a domain, in the order a console shows them:
 * - ownership: TXT `_sendline.<domain>` = `sendline-verification=<token>` (checked by VerifyDomain);
 * - mx: MX `<return path>` → mailHost, priority 10: bounces and complaints sent to the envelope sender
 *   (`b.<token>@<return path>`) come back to the service. The return path is `<label>.<domain>` (ReturnPath),
 *   never the domain itself, whose own MX (its incoming mail) is left alone;
 * - spf: TXT `<return path>` = `v=spf1 include:<spfDomain> -all`. SPF is checked against the envelope sender's
 *   domain, the return path: `include:` delegates to the SPF record the service publishes at spfDomain (the
 *   addresses it sends from), so the service can change them without anyone editing DNS, and `-all` refuses
 *   anyone else, since only the service sends with this name. It aligns with the From domain (relaxed), so it
 *   counts for DMARC. The return path's two records are checked by VerifyReturnPath;
 * - dkim: TXT `<selector>._domainkey.<domain>` = `v=DKIM1; k=rsa; p=<base64 SPKI>`;
 * - dmarc: TXT `_dmarc.<domain>` = `v=DMARC1; p=none;` (monitor only; owners tighten it later).
 * A domain without a return path (added before they existed, not assigned one yet) has no mx and spf records.
 */
export function dnsRecordsFor(domain: string, domainState: DomainDnsIdentity, service: ServiceDnsNames): DnsRecord[] {
  const name = normalizeDomainName(domain);
  const mailHost = serviceName(service.mailHost, 'mail host');
  const spfDomain = serviceName(service.spfDomain, 'SPF domain');
  const returnPath = domainState.returnPath?.host;
  return [
    {
      type: 'TXT',
      name: verificationRecordName(name),
      value: verificationRecordValue(domainState.verificationToken),
      purpose: 'ownership',
    },
    ...(returnPath
      ? ([
          { type: 'MX', name: returnPath, value: mailHost, priority: MX_PRIORITY, purpose: 'mx' },
          { type: 'TXT', name: returnPath, value: returnPathSpfValue(spfDomain), purpose: 'spf' },
        ] satisfies DnsRecord[])
      : []),
    {
      type: 'TXT',
      name: `${domainState.dkimSelector}._domainkey.${name}`,
      value: `v=DKIM1; k=rsa; p=${dkimPublicKeyBase64(domainState.dkimPublicKey)}`,
      purpose: 'dkim',
    },
    { type: 'TXT', name: `_dmarc.${name}`, value: 'v=DMARC1; p=none;', purpose: 'dmarc' },
  ];
}

/**
 * The records earlier instructions asked for that a domain should no longer have: the MX on the domain itself
 * (`<domain>` → mailHost), which took the domain's incoming mail. Asked of every domain added before return paths
 * existed (none, or one assigned after the domain was added); only that MX: the domain's own MX records stay.
 */
export function dnsRecordsToRemove(
  domain: string,
  domainState: { addedAt: number; returnPath: { assignedAt: number } | null },
  service: Pick<ServiceDnsNames, 'mailHost'>,
): DnsRecord[] {
  const { returnPath } = domainState;
  if (returnPath && returnPath.assignedAt <= domainState.addedAt) return [];
  const name = normalizeDomainName(domain);
  return [
    { type: 'MX', name, value: serviceName(service.mailHost, 'mail host'), priority: MX_PRIORITY, purpose: 'mx' },
  ];
}

/**
 * The host of a domain's return path, `<label>.<domain>`, lowercased. The label is one DNS label (a-z, 0-9, '-');
 * DomainError 'InvalidReturnPathLabel' otherwise, and 'InvalidDomainName' when the whole name is too long.
 */
export function returnPathHost(domain: string, label: string): string {
  const lower = typeof label === 'string' ? label.toLowerCase() : '';
  if (!RETURN_PATH_LABEL.test(lower)) {
    throw new DomainError(
      'InvalidReturnPathLabel',
      `the return path label ${JSON.stringify(label)} must be one DNS label: 1..63 of a-z, 0-9, '-', not starting or ending with '-'`,
      { label },
    );
  }
  return normalizeDomainName(`${lower}.${normalizeDomainName(domain)}`);
}

const RETURN_PATH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** An MX record as a resolver returns it (node:dns's resolveMx). */
export interface MxRecord {
  exchange: string;
  priority: number;
}

/** What is wrong with one of a return path's records, in words that name the record. */
export interface ReturnPathProblem {
  record: 'MX' | 'SPF';
  message: string;
}

const hostOf = (exchange: string) => exchange.trim().toLowerCase().replace(/\.$/, '');

/**
 * Checks what a lookup found at a return path (its MX records and TXT records) against the two records it must
 * publish (dnsRecordsFor): every MX points to the mail host (another one would take the bounces), and exactly one
 * SPF record, which includes the SPF domain (the `all` qualifier is the owner's). Returns the problems; none: verified.
 */
export function returnPathProblems(
  host: string,
  found: { mxRecords: readonly MxRecord[]; txtRecords: readonly TxtRecord[] },
  service: ServiceDnsNames,
): ReturnPathProblem[] {
  const mailHost = serviceName(service.mailHost, 'mail host');
  const spfDomain = serviceName(service.spfDomain, 'SPF domain');
  const problems: ReturnPathProblem[] = [];
  const publishMx = `publish MX ${host} ${MX_PRIORITY} ${mailHost}`;
  const exchanges = found.mxRecords.map((record) => hostOf(record.exchange));
  const others = [...new Set(exchanges.filter((exchange) => exchange !== mailHost))];
  if (exchanges.length === 0) {
    problems.push({ record: 'MX', message: `no MX record found at ${host}; ${publishMx}` });
  } else if (others.length === exchanges.length) {
    problems.push({
      record: 'MX',
      message: `the MX of ${host} is ${others.join(', ')}, not ${mailHost}; ${publishMx}`,
    });
  } else if (others.length > 0) {
    problems.push({
      record: 'MX',
      message: `${host} also has MX records for ${others.join(', ')}, which would take bounces; keep only ${mailHost}`,
    });
  }
  const spfValue = returnPathSpfValue(spfDomain);
  const spf = found.txtRecords.map(joinTxtRecord).filter((value) => /^v=spf1(\s|$)/i.test(value.trim()));
  const include = `include:${spfDomain}`;
  if (spf.length === 0) {
    problems.push({
      record: 'SPF',
      message: `no SPF record (TXT "v=spf1 …") found at ${host}; publish TXT ${host} "${spfValue}"`,
    });
  } else if (spf.length > 1) {
    problems.push({
      record: 'SPF',
      message: `${spf.length} SPF records at ${host} (a name may have only one): keep only "${spfValue}"`,
    });
  } else if (!spf[0]!.toLowerCase().split(/\s+/).includes(include)) {
    problems.push({
      record: 'SPF',
      message: `the SPF record at ${host} does not include ${spfDomain}: found "${spf[0]}"; publish "${spfValue}"`,
    });
  }
  return problems;
}
