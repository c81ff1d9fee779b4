import { randomUUID } from 'node:crypto';
import { RelayRouter, SmtpDelivery, type TestMailServer } from '@sendline/infra';
import { DeliveryLedger } from '@sendline/sender';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApi } from '../support/api';
import { eventually, uniqueName } from '../support/services';
import { dataOf, EventTap, startSenderStage, type SenderStage } from './support';

/**
 * Two runs of one message at once in one sender process. Kafka gives a partition to one consumer, but kafkajs
 * restarts a consumer that crashed (Kafka away longer than its retries) without waiting for the batch in hand: that
 * batch's handler goes on beside the new consumer's, which fetches the same messages again. While the first run's
 * SMTP transaction waits for its server, the second must not plan a send of its own (no guard is written yet): it
 * waits for the first run, then finds the recipient accepted.
 */

let api: TestApi;
let mail: TestMailServer;
let tap: EventTap;
let stage: SenderStage;
let delivery: SmtpDelivery;

beforeAll(async () => {
  stage = await startSenderStage();
  ({ api, mail, tap } = stage);
  delivery = new SmtpDelivery(new RelayRouter(mail.host, mail.port), { heloName: 'sender.sendline.test' });
});

afterAll(async () => {
  mail?.release();
  delivery?.close();
  await stage?.close();
});

describe('two runs of the same message in one sender at once', () => {
  it('deliver it once: the later run waits for the earlier one and takes its Delivered from the guard', async () => {
    const pipeline = stage.pipeline(new DeliveryLedger(api.deps.redis, 60_000, uniqueName('test-sender')), delivery);
    const recipient = `twice-${randomUUID().slice(0, 8)}@example.net`;
    // The same MessageAccepted, read at the same place, by both handlers.
    const { messageId, job } = await stage.acceptedJob(recipient, `${api.deps.store.topics.messages}:0:7`);

    mail.hold((address) => address === recipient);
    const first = pipeline.run([job]);
    await eventually(async () => (mail.heldCount > 0 ? true : undefined), 30_000, 'the first run at the server');
    const second = pipeline.run([job]);
    // Long enough for a second run that does not wait to plan, sign and reach the server (it would be held too).
    await eventually(async () => (mail.heldCount > 1 ? true : undefined), 1500, '').catch(() => undefined);
    const heldAtOnce = mail.heldCount;
    mail.release();
    const reports = await Promise.all([first, second]);

    expect(heldAtOnce).toBe(1);
    expect(mail.deliveriesTo(recipient)).toBe(1);
    expect(reports.map((report) => report.transactions)).toEqual([1, 0]);
    const events = await tap.waitForMessage(messageId, (found) => found.some((e) => e.type === 'MessageDelivered'));
    const delivered = tap.allEvents((e) => e.type === 'MessageDelivered' && dataOf(e).messageId === messageId);
    expect(new Set(delivered.map((e) => e.metadata.eventId)).size).toBe(1);
    // The run that took its Delivered from the guard records the envelope sender the first run sent with.
    const envelopeFrom = mail.messages().find((m) => m.recipients.includes(recipient))!.envelopeFrom;
    expect(envelopeFrom).toMatch(/^b\./);
    expect(delivered.map((e) => dataOf(e).returnPath)).toEqual(delivered.map(() => envelopeFrom));
    expect(events.filter((e) => e.type === 'MessageSent')).toHaveLength(1);
  });
});
