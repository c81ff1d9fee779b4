import { addressDomain, parseAddressList } from '@sendline/domain';
import { nameBasedId } from '@sendline/infra';

/** The system sender: the From of every system mail, and the domain its organization owns. */
export interface SystemSender {
  /** As given: `Sendline <no-reply@system.sendline.test>` (the From header). */
  from: string;
  email: string;
  domain: string;
  /** The system organization's id: derived from the domain, so every process finds it without sharing state. */
  organizationId: string;
}

/** Parses the configured sender (one mailbox); throws an Error naming the setting when it is not one address. */
export function systemSender(from: string): SystemSender {
  const parsed = parseAddressList(from);
  if (!parsed.ok || parsed.value.length !== 1) {
    throw new Error(`the system sender must be one email address such as "Sendline <no-reply@example.com>": ${from}`);
  }
  const email = parsed.value[0]!.email;
  const domain = addressDomain(email).toLowerCase();
  return { from, email, domain, organizationId: systemOrganizationId(domain) };
}

/** The system organization of a sender domain (a name-based id: the same domain, the same organization). */
export function systemOrganizationId(domain: string): string {
  return `system-${nameBasedId('sendline.system-organization', domain.toLowerCase())}`;
}
