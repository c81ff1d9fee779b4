import { randomUUID } from 'node:crypto';
import type { MessageEvent } from '@sendline/domain';
import {
  ClickHouseActivityReader,
  ClickHouseActivityWriter,
  InfrastructureError,
  RelayRouter,
  SmtpDelivery,
  type TestMailServer,
} from '@sendline/infra';
import { DeliveryLedger } from '@sendline/sender';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshActivityDatabase } from '../projector/support';
import type { TestApi, TestOrganization } from '../support/api';
import { eventually, uniqueName } from '../support/services';
import { dataOf, EventTap, startSenderStage, type SenderStage } from './support';

/**
 * One Sent per real attempt, whatever faults happened. The ledger records that MessageSent was appended with the
 * run's outcomes, after the send. Redis fails at that write: the attempt's MessageSent and its outcomes are
 * appended and the server has the message, but the ledger says neither. The handler fails (retriable) and runs
 * again: the guard (written on its own as the 250 arrived) keeps it from sending again, and it appends
 * MessageSent and the outcomes a second time. They are the same events (same event ids), the message is delivered
 * once, and its details in the activity store show one Sent and one Delivered per recipient.
 */

/** The ledger on the real Redis, with Redis "failing" once at the write that records MessageSent. */
class LedgerFailingOnce extends DeliveryLedger {
  failures = 1;

  override async record(...args: Parameters<DeliveryLedger['record']>): Promise<void> {
    const [, sent = []] = args;
    if (sent.length > 0 && this.failures-- > 0) {
      throw new InfrastructureError('LedgerUnavailable', 'the delivery ledger (record) failed: Connection lost', {
        retriable: true,
      });
    }
    return super.record(...args);
  }
}

let api: TestApi;
let org: TestOrganization;
let mail: TestMailServer;
let tap: EventTap;
let stage: SenderStage;
let activity: Awaited<ReturnType<typeof freshActivityDatabase>>;
let delivery: SmtpDelivery;

beforeAll(async () => {
  stage = await startSenderStage();
  ({ api, org, mail, tap } = stage);
  activity = await freshActivityDatabase();
  delivery = new SmtpDelivery(new RelayRouter(mail.host, mail.port), { heloName: 'sender.sendline.test' });
});

afterAll(async () => {
  delivery?.close();
  await activity?.drop();
  await stage?.close();
});

describe('a Redis fault at the ledger write that records MessageSent', () => {
  it('appends the same MessageSent again; the message is delivered once and its details show one Sent', async () => {
    const ledger = new LedgerFailingOnce(api.deps.redis, 60_000, uniqueName('test-sender'));
    const pipeline = stage.pipeline(ledger, delivery);
    const recipients = [`ann-${randomUUID().slice(0, 8)}@example.net`, `bob-${randomUUID().slice(0, 8)}@example.org`];
    const { messageId, job } = await stage.acceptedJob(recipients.join(', '), `${api.deps.store.topics.messages}:0:1`);

    // The first run: MessageSent appended, the message sent and its outcomes appended, then Redis fails.
    await expect(pipeline.run([job])).rejects.toMatchObject({ code: 'LedgerUnavailable', retriable: true });
    for (const recipient of recipients) expect(mail.deliveriesTo(recipient)).toBe(1);
    // The handler runs again (at-least-once): the guard says the server has it; nothing is sent again.
    const again = await pipeline.run([job]);
    expect(again.transactions).toBe(0);
    expect(again.outcomes.Delivered).toBe(2);
    const events = await tap.waitForMessage(
      messageId,
      (found) => found.filter((e) => e.type === 'MessageDelivered').length === 2,
    );
    const ofMessage = (type: string) => tap.allEvents((e) => e.type === type && dataOf(e).messageId === messageId);
    await eventually(async () => (ofMessage('MessageSent').length === 2 ? true : undefined), 30_000, 'the second Sent');

    const sent = ofMessage('MessageSent');
    expect(sent).toHaveLength(2);
    expect(new Set(sent.map((e) => e.metadata.eventId)).size).toBe(1);
    for (const recipient of recipients) expect(mail.deliveriesTo(recipient)).toBe(1);
    await eventually(async () => (ofMessage('MessageDelivered').length === 4 ? true : undefined), 30_000, 'Delivered');
    expect(new Set(ofMessage('MessageDelivered').map((e) => e.metadata.eventId)).size).toBe(2);

    // The activity store, fed every event as the projector would be (the duplicate included), shows one Sent.
    const writer = new ClickHouseActivityWriter(activity.client, activity.database, { maxDelayMs: 10 });
    const all = tap.allEvents((e) => dataOf(e).messageId === messageId) as MessageEvent[];
    for (const event of all) await writer.write([{ event }]);
    await writer.close();
    const details = await new ClickHouseActivityReader(activity.client, activity.database).details(
      org.organizationId,
      messageId,
    );
    expect(details?.events.map((event) => [event.type, event.recipient]).sort()).toEqual(
      [
        ['Accepted', recipients[0]],
        ['Accepted', recipients[1]],
        ['Sent', recipients[0]],
        ['Sent', recipients[1]],
        ['Delivered', recipients[0]],
        ['Delivered', recipients[1]],
      ].sort(),
    );
    expect(events.filter((e) => e.type === 'MessageSent')).toHaveLength(1);
  });
});
