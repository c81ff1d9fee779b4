import { dkimPublicKeyBase64, type DomainState } from '@sendline/domain';
import type { TxtResolver } from '../dns/resolver';
import type { AccountsView } from '../views/accounts/view';
import type { DkimRecordSource } from './dkimCheck';

/**
 * Where a receiving server finds a sending domain's DKIM public key. In production that is public DNS;
 * the development and test domains are not in public DNS, so the test mail server asks one of these:
 *
 * - `dkimRecordsFromMap`: a fixed map of record names to TXT values (tests);
 * - `dkimRecordsFromAccounts`: the accounts view (the public key every domain was added with), found by
 *   searching the organizations for the domain (development: a handful of organizations);
 * - `dkimRecordsFromDns`: a TXT lookup (the development DNS server, which serves what `domain add` printed).
 */

/** The DKIM TXT record value a domain publishes: `v=DKIM1; k=rsa; p=<base64 SPKI>`. */
export function dkimRecordValue(publicKey: string): string {
  return `v=DKIM1; k=rsa; p=${dkimPublicKeyBase64(publicKey)}`;
}

/** `<selector>._domainkey.<domain>` split back into its selector and domain, or undefined. */
export function parseDkimRecordName(name: string): { selector: string; domain: string } | undefined {
  const match = /^([^.]+)\._domainkey\.(.+?)\.?$/i.exec(name);
  return match ? { selector: match[1]!.toLowerCase(), domain: match[2]!.toLowerCase() } : undefined;
}

export function dkimRecordsFromMap(records: ReadonlyMap<string, string> | Record<string, string>): DkimRecordSource {
  const entries: [string, string][] = records instanceof Map ? [...records] : Object.entries(records);
  const map = new Map(entries.map(([name, value]) => [name.toLowerCase().replace(/\.$/, ''), value]));
  return async (name) => map.get(name.toLowerCase().replace(/\.$/, ''));
}

export function dkimRecordsFromAccounts(
  accounts: Pick<AccountsView, 'organizations' | 'domain'>,
  cacheTtlMs = 60_000,
): DkimRecordSource {
  const cache = new Map<string, { value: string; expires: number }>();
  return async (name) => {
    const parsed = parseDkimRecordName(name);
    if (!parsed) return undefined;
    const cached = cache.get(name.toLowerCase());
    if (cached && cached.expires > Date.now()) return cached.value;
    const organizations = await accounts.organizations();
    const states = await Promise.all(organizations.map((id) => accounts.domain(id, parsed.domain)));
    const state = states.find(
      (candidate): candidate is DomainState => candidate !== null && candidate.dkimSelector === parsed.selector,
    );
    if (!state) return undefined;
    const value = dkimRecordValue(state.dkimPublicKey);
    cache.set(name.toLowerCase(), { value, expires: Date.now() + cacheTtlMs });
    return value;
  };
}

export function dkimRecordsFromDns(resolveTxt: TxtResolver): DkimRecordSource {
  return async (name) => {
    const records = await resolveTxt(name);
    const dkim = records.map((chunks) => chunks.join('')).find((value) => /^v=DKIM1/i.test(value.trim()));
    return dkim;
  };
}
