import { dkimVerify } from 'mailauth/lib/dkim/verify';

/**
 * The DKIM check a receiving server runs (the test mail server, on every message it receives) and where it finds
 * the public keys: a DkimRecordSource (the sources themselves are in dkimRecords.ts).
 */

/** The DKIM TXT record ("v=DKIM1; k=rsa; p=…") at a name such as `sl1._domainkey.example.com`, or undefined. */
export type DkimRecordSource = (name: string) => Promise<string | undefined>;

/** A DkimRecordSource that asks each source in turn until one knows the name. */
export function firstDkimRecord(...sources: DkimRecordSource[]): DkimRecordSource {
  return async (name) => {
    for (const source of sources) {
      const record = await source(name).catch(() => undefined);
      if (record !== undefined) return record;
    }
    return undefined;
  };
}

export interface DkimCheck {
  /** mailauth's verdict for the first signature: pass, fail, neutral, policy, temperror, permerror, or none. */
  result: string;
  domain?: string;
  selector?: string;
  /** mailauth's comment on a verdict other than pass. */
  comment?: string;
}

/**
 * mailauth's check of a received message's first DKIM signature, with public keys from `source` (without one,
 * every signature verifies as temperror).
 */
export async function checkDkim(raw: Buffer, source: DkimRecordSource | undefined): Promise<DkimCheck> {
  const resolver = async (name: string, rrtype: string): Promise<string[][]> => {
    const record = rrtype === 'TXT' && source ? await source(name) : undefined;
    if (record === undefined) throw Object.assign(new Error(`no ${rrtype} record at ${name}`), { code: 'ENOTFOUND' });
    const chunks: string[] = [];
    for (let i = 0; i < record.length; i += 255) chunks.push(record.slice(i, i + 255));
    return [chunks];
  };
  const verdict = await dkimVerify(raw, { resolver });
  const first = verdict.results[0];
  if (!first) return { result: 'none' };
  const status = first.status as { result: string; comment?: string };
  return {
    result: status.result,
    ...(first.signingDomain && { domain: first.signingDomain }),
    ...(first.selector && { selector: first.selector }),
    ...(status.result !== 'pass' && status.comment && { comment: status.comment }),
  };
}
