import { randomUUID } from 'node:crypto';
import {
  ActivityQueries,
  returnPathAddress,
  returnPathDomainFromEnv,
  ReturnedMessages,
  type ClickHouseClient,
  type EventStore,
  type StoredEvent,
} from '@sendline/infra';
import { accepted, delivered, sent } from '../projector/support';
import { dsnAbout } from '../support/receiving';
import { waitUntil } from './harness';

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
