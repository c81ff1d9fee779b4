import { randomUUID } from 'node:crypto';
import { RelayRouter, SmtpDelivery, type TestMailServer } from '@sendline/infra';
import { DeliveryLedger } from '@sendline/sender';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, uniqueName } from '../support/services';
import { EventTap, startSenderStage, type SenderStage } from './support';

/**
 * A message's Delivered is dated when its server said 250, not when the run it was sent in ended: one run sends
 * two messages, and the second one's server holds its answer for two seconds. The first message's Delivered (what
 * the activity, its details and the Delivery webhook show as its time) must not wait for the second one's answer.
 */

let stage: SenderStage;
let mail: TestMailServer;
let tap: EventTap;
let delivery: SmtpDelivery;

beforeAll(async () => {
  stage = await startSenderStage();
  ({ mail, tap } = stage);
  delivery = new SmtpDelivery(new RelayRouter(mail.host, mail.port), { heloName: 'sender.sendline.test' });
});

afterAll(async () => {
  mail?.release();
  delivery?.close();
  await stage?.close();
});

describe('a run of two messages where the second server answers two seconds later', () => {
  it('dates each Delivered at its own 250', async () => {
    const { api } = stage;
    const pipeline = stage.pipeline(new DeliveryLedger(api.deps.redis, 60_000, uniqueName('test-sender')), delivery);
    const quick = `quick-${randomUUID().slice(0, 8)}@example.net`;
    const slow = `slow-${randomUUID().slice(0, 8)}@example.org`;
    const topic = api.deps.store.topics.messages;
    const first = await stage.acceptedJob(quick, `${topic}:0:1`);
    const second = await stage.acceptedJob(slow, `${topic}:0:2`);

    mail.hold((address) => address === slow);
    const running = pipeline.run([first.job, second.job]);
    await eventually(async () => (mail.deliveriesTo(quick) === 1 ? true : undefined), 10_000, 'the quick message');
    await eventually(async () => (mail.heldCount === 1 ? true : undefined), 10_000, 'the slow server holding');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const releasedAt = Date.now();
    mail.release();
    const report = await running;
    expect(report.outcomes.Delivered).toBe(2);

    const deliveredAt = async (messageId: string) => {
      const events = await tap.waitForMessage(messageId, (found) => found.some((e) => e.type === 'MessageDelivered'));
      return events.find((e) => e.type === 'MessageDelivered')!.metadata.occurredAt;
    };
    const quickReceivedAt = mail.messages().find((m) => m.recipients.includes(quick))!.receivedAt;
    const quickDelivered = await deliveredAt(first.messageId);
    const slowDelivered = await deliveredAt(second.messageId);
    // The quick one: at its own 250 (the server took the message, then answered), two seconds before the run ended.
    expect(quickDelivered).toBeGreaterThanOrEqual(quickReceivedAt);
    expect(quickDelivered).toBeLessThan(releasedAt - 1000);
    // The slow one: when its server finally answered.
    expect(slowDelivered).toBeGreaterThanOrEqual(releasedAt);
  });
});
