import { randomBytes, randomUUID } from 'node:crypto';
import type { AccountEvent } from '@sendline/domain';
import { deliveryStatusNotification, encryptSecret, type AccountsView } from '@sendline/infra';

/**
 * What the receiving side's tests and benchmarks share: the mail a remote server sends back, and an organization
 * that receives inbound mail.
 */

/**
 * A DSN reporting `recipient` unknown (5.1.1), as a remote server writes it, about a message of ours sent from
 * `senderDomain`, to its return path `envelopeFrom`.
 */
export function dsnAbout(
  messageId: string,
  recipient: string,
  envelopeFrom: string,
  senderDomain = 'shop.example',
): Buffer {
  const original = Buffer.from(
    `From: <orders@${senderDomain}>\r\nTo: <${recipient}>\r\nSubject: Your receipt\r\n` +
      `Message-ID: <${messageId}@${senderDomain}>\r\n\r\nThanks.\r\n`,
  );
  return deliveryStatusNotification(
    {
      reportingMta: 'mx.dest.example.net',
      messageId: `${randomUUID()}@mx.dest.example.net`,
      boundary: 'b1',
      date: new Date(),
    },
    { envelopeFrom, arrivalDate: new Date(), sourceIp: '127.0.0.1', raw: original },
    [{ address: recipient, status: '5.1.1', diagnostic: `550 5.1.1 <${recipient}>: user unknown` }],
  );
}

/**
 * An organization whose inbound address is `<inboundHash>@<the inbound domain>` and whose InboundHookUrl is
 * `hookUrl`, written straight to the accounts view (which the MX and the readers read).
 */
export async function inboundOrganization(
  accounts: AccountsView,
  organization: { organizationId: string; name: string; inboundHash: string; hookUrl: string; secretKey: Buffer },
): Promise<void> {
  const { organizationId, secretKey } = organization;
  const metadata = (n: number) => ({
    eventId: `${organizationId}-${n}`,
    organizationId,
    occurredAt: Date.now(),
    schemaVersion: 1,
  });
  const setup: AccountEvent[] = [
    {
      type: 'OrganizationCreated',
      data: { organizationId, name: organization.name, adminEmail: 'admin@inbound.example' },
      metadata: metadata(0),
    },
    {
      type: 'ServerSettingsChanged',
      data: {
        inboundHash: organization.inboundHash,
        inboundHookUrl: organization.hookUrl,
        inboundDomain: '',
        inboundSpamThreshold: 0,
        rawEmailEnabled: false,
        inboundHookSigningSecretSealed: encryptSecret(`whsec_${randomBytes(32).toString('base64')}`, secretKey),
      },
      metadata: metadata(1),
    },
  ];
  await accounts.apply(setup);
}
