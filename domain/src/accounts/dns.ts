import { DomainError } from '../domainError';
import { normalizeDomainName } from './rules';

/**
 * The DNS records an organization publishes for a sending domain, and the ownership check.
 *
 * The domain layer never resolves names: the caller looks the TXT records up and hands them to the
 * VerifyDomain command; these functions only build and compare strings.
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
}

/**
 * The records to publish for a domain, in the order a console shows them:
 * - ownership: TXT `_sendline.<domain>` = `sendline-verification=<token>` (checked by VerifyDomain);
 * - mx: MX `<domain>` → mailHost, priority 10 (the domain is hosted on the service's mail server);
 * - spf: TXT `<domain>` = `v=spf1 include:<mailHost> ~all`. `include:` delegates to the SPF record that
 *   mailHost itself publishes (listing the addresses the service sends from), so the service can change
 *   its addresses without every customer editing DNS; `~all` soft-fails other senders rather than
 *   rejecting them, the cautious default while a domain is being moved. A domain that already has an SPF
 *   record must merge the `include:` into it: a name may carry only one SPF record;
 * - dkim: TXT `<selector>._domainkey.<domain>` = `v=DKIM1; k=rsa; p=<base64 SPKI>`;
 * - dmarc: TXT `_dmarc.<domain>` = `v=DMARC1; p=none;` (monitor only; owners tighten it later).
 */
export function dnsRecordsFor(domain: string, domainState: DomainDnsIdentity, mailHost: string): DnsRecord[] {
  const name = normalizeDomainName(domain);
  let host: string;
  try {
    host = normalizeDomainName(mailHost);
  } catch {
    throw new DomainError('InvalidMailHost', `the mail host ${JSON.stringify(mailHost)} is not a valid host name`);
  }
  return [
    {
      type: 'TXT',
      name: verificationRecordName(name),
      value: verificationRecordValue(domainState.verificationToken),
      purpose: 'ownership',
    },
    { type: 'MX', name, value: host, priority: MX_PRIORITY, purpose: 'mx' },
    { type: 'TXT', name, value: `v=spf1 include:${host} ~all`, purpose: 'spf' },
    {
      type: 'TXT',
      name: `${domainState.dkimSelector}._domainkey.${name}`,
      value: `v=DKIM1; k=rsa; p=${dkimPublicKeyBase64(domainState.dkimPublicKey)}`,
      purpose: 'dkim',
    },
    { type: 'TXT', name: `_dmarc.${name}`, value: 'v=DMARC1; p=none;', purpose: 'dmarc' },
  ];
}
