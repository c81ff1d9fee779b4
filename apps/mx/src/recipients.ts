import { inboundRecipientOf } from '@sendline/domain';
import { RETURN_PATH_PREFIX, type ReturnPathNames } from '@sendline/infra';

/**
 * Which recipients the MX takes (RCPT TO): the one rule that keeps it from being an open relay. It takes mail only
 * for addresses it owns: inbound addresses (`{inboundHash}[+{mailboxHash}]@{the service's inbound domain}`, the hash
 * being an organization's, read from the accounts view) and return paths: `b.<anything>@<return-path domain>`, where the
 * return-path domains are the service's own (`bounces.sendline.dev`) and every sending domain's return-path host
 * (`bounces.shop.example`: `<label>.<domain>`, fixed when the domain got it, so a later change of the label moves
 * no domain). Everything else is refused:
 *
 * | recipient                                  | answer                                   |
 * |--------------------------------------------|------------------------------------------|
 * | any address at a domain that is not ours   | 550 5.7.1 relaying denied                |
 * | at a return-path domain, not `b.…`         | 550 5.1.1 no such mailbox                |
 * | `b.…` at a return-path domain              | accepted (the token is not checked here) |
 * | at the inbound domain, an organization's hash | accepted (inbound mail)               |
 * | at the inbound domain, anything else       | 550 5.1.1 no such mailbox                |
 * | any address at an organization's VERIFIED own inbound domain | accepted (inbound mail) |
 * | at an own inbound domain not verified (yet) | 550 5.7.1 relaying denied, as any other |
 *
 * The token after `b.` is not checked: a forged or damaged one is still taken and recorded, and the reader of
 * mail.received, which checks every token, reports it to the operator; a refusal here would only tell a forger
 * which tokens are good. (RFC 5321 wants `postmaster` taken at every domain served; it is refused until inbound
 * addresses are served.)
 *
 * One transaction holds one kind: once a return path is accepted an inbound address is deferred (`452 4.5.3`, the
 * sender sends it in a transaction of its own), and the other way round, so each MailReceived has one reader.
 */

export type RecipientKind = 'returnPath' | 'inbound';
export type RecipientVerdict =
  { accepted: true; kind: RecipientKind } | { accepted: false; code: number; message: string };

/** The organization whose inbound address has this hash (the accounts view's index), or null. */
export interface InboundAddresses {
  organizationOf(inboundHash: string): Promise<string | null>;
}

/** The organization whose VERIFIED own inbound domain this is (lowercase), or null: unknown or unverified. */
export interface InboundDomains {
  organizationOfDomain(domain: string): Promise<string | null>;
}

/** Whether a domain (lowercase) is the return-path host of some organization's sending domain. */
export interface ReturnPathHosts {
  isReturnPathHost(domain: string): Promise<boolean>;
}

export async function recipientVerdict(
  address: string,
  returnPath: Pick<ReturnPathNames, 'domain'>,
  returnPathHosts: ReturnPathHosts,
  inbound?: { domain: string; addresses: InboundAddresses; domains?: InboundDomains },
): Promise<RecipientVerdict> {
  const at = address.lastIndexOf('@');
  const local = at < 0 ? address : address.slice(0, at);
  const domain = (at < 0 ? '' : address.slice(at + 1)).toLowerCase().replace(/\.$/, '');
  if (inbound && domain !== '' && domain === inbound.domain) {
    const recipient = inboundRecipientOf(`${local}@${domain}`, inbound.domain);
    const organization = recipient ? await inbound.addresses.organizationOf(recipient.inboundHash) : null;
    if (!organization) return { accepted: false, code: 550, message: `5.1.1 <${address}>: no such mailbox` };
    return { accepted: true, kind: 'inbound' };
  }
  if (!(await isReturnPathDomain(domain, returnPath, returnPathHosts))) {
    if (inbound?.domains && domain !== '' && local !== '' && (await inbound.domains.organizationOfDomain(domain))) {
      return { accepted: true, kind: 'inbound' };
    }
    return { accepted: false, code: 550, message: `5.7.1 <${address}>: relaying denied` };
  }
  const lower = local.toLowerCase();
  if (!lower.startsWith(RETURN_PATH_PREFIX) || lower.length === RETURN_PATH_PREFIX.length) {
    return { accepted: false, code: 550, message: `5.1.1 <${address}>: no such mailbox` };
  }
  return { accepted: true, kind: 'returnPath' };
}

async function isReturnPathDomain(
  domain: string,
  returnPath: Pick<ReturnPathNames, 'domain'>,
  returnPathHosts: ReturnPathHosts,
): Promise<boolean> {
  if (domain === '') return false;
  if (domain === returnPath.domain) return true;
  return returnPathHosts.isReturnPathHost(domain);
}
