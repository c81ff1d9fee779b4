import { randomBytes, randomUUID } from 'node:crypto';
import type { AccountEvent } from '@sendline/domain';
import {
  ActivityQueries,
  deliveryStatusNotification,
  encryptSecret,
  returnPathAddress,
  returnPathDomainFromEnv,
  ReturnedMessages,
  type AccountsView,
  type ClickHouseClient,
  type EventStore,
  type StoredEvent,
} from '@sendline/infra';
import { accepted, delivered, sent } from '../projector/support';
import { waitUntil } from './harness';

/** What the receiving side's fault tests share: the mail a remote server sends back, and an inbound organization. */

/** A DSN reporting `recipient` unknown (5.1.1), about a message of ours, sent to its return path `envelopeFrom`. */
export function dsnAbout(messageId: string, recipient: string, envelopeFrom: string): Buffer {
  const original = Buffer.from(
    `From: <orders@shop.example>\r\nTo: <${recipient}>\r\nSubject: Your receipt\r\n` +
      `Message-ID: <${messageId}@shop.example>\r\n\r\nThanks.\r\n`,
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
      data: { organizationId, name: organization.name, adminEmail: 'admin@chaos.example' },
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

/** A message delivered to one recipient, and the DSN its recipient's server sends back to its return path. */
export interface ReturnedMail {
  messageId: string;
  recipient: string;
  /** The message's return path (`b.<token>@…`): where the DSN goes. */
  to: string;
  raw: Buffer;
}

/**
 * `count` messages of the organization delivered an hour ago, one recipient each: appended to the store's topics
 * and waited for in the activity store (where the returns reader finds what a DSN is about). Returns each message
 * with the DSN about it.
 */
export async function deliveredAnHourAgo(
  count: number,
  on: {
    store: EventStore;
    organizationId: string;
    tokenKey: Buffer;
    activity: { client: ClickHouseClient; database: string };
  },
): Promise<ReturnedMail[]> {
  const at = Date.now() - 3600_000;
  const run = randomUUID().slice(0, 8);
  const domain = returnPathDomainFromEnv();
  const mails = Array.from({ length: count }, (_, i) => {
    const messageId = randomUUID();
    const recipient = `r${i}-${run}@dest.example.net`;
    const to = returnPathAddress(on.tokenKey, { messageId, recipientIndex: 0 }, domain);
    return { messageId, recipient, to, raw: dsnAbout(messageId, recipient, to) };
  });
  const events: StoredEvent[] = mails.flatMap(({ messageId, recipient }, i) => {
    const message = accepted(on.organizationId, { messageId, to: [recipient], at: at + i, subject: `Order ${i}` });
    return [message, sent(message), delivered(message, recipient)];
  });
  for (let i = 0; i < events.length; i += 150) await on.store.append(events.slice(i, i + 150));
  const returned = new ReturnedMessages(
    new ActivityQueries(on.activity.client, on.activity.database, { timeoutMs: 10_000 }),
  );
  await waitUntil(
    async () => {
      const states = await returned.states(mails.map((mail) => mail.messageId));
      return mails.every(
        ({ messageId, recipient }) => states.get(messageId)?.recipients.get(recipient)?.status === 'Delivered',
      );
    },
    120_000,
    `the ${count} messages to show as delivered in the activity store`,
  );
  return mails;
}
