import { randomUUID } from 'node:crypto';
import type { MessageAccepted } from '@sendline/domain';
import { DkimKeys, RelayRouter, secretKeyFromEnv, SmtpDelivery, type TestMailServer } from '@sendline/infra';
import { DeliveryLedger, DeliveryPipeline, Limiter } from '@sendline/sender';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../chaos/harness';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { call } from '../support/http';
import { uniqueName } from '../support/services';
import { dataOf, email, EventTap, SHORT_RETRIES, startMailServer } from './support';

/**
 * Time to inbox: in one delivery run (a chunk of a fetched batch), a message leaves as soon as it is signed, and its
 * Delivered says when its own server took it: it never waits for a slower message of the same run.
 */

let api: TestApi;
let org: TestOrganization;
let mail: TestMailServer;
let tap: EventTap;
let delivery: SmtpDelivery;

beforeAll(async () => {
  api = await startTestApi();
  org = await createTestOrganization(api.deps);
  const mine = new Set([org.organizationId]);
  mail = await startMailServer(api.deps.accounts, [org], { keepRaw: false });
  tap = await EventTap.start(api.deps.store, [api.deps.store.topics.messages], () => mine);
  delivery = new SmtpDelivery(new RelayRouter(mail.host, mail.port), { heloName: 'sender.sendline.test' });
});

afterAll(async () => {
  mail?.release();
  delivery?.close();
  await tap?.stop();
  await mail?.stop();
  await api?.close();
});

describe('two messages in one delivery run, the second one’s server slow to answer', () => {
  it('delivers the first at once, and its Delivered is decided before the second one’s server answers', async () => {
    const pipeline = new DeliveryPipeline({
      store: api.deps.store,
      ledger: new DeliveryLedger(api.deps.redis, 60_000, uniqueName('test-sender')),
      dkimKeys: new DkimKeys(api.deps.accounts, secretKeyFromEnv()),
      delivery,
      suppressions: api.deps.suppressions,
      limiter: new Limiter(10),
      retryPolicy: SHORT_RETRIES,
      now: Date.now,
      random: Math.random,
    });
    const slow = `slow-${randomUUID().slice(0, 8)}@example.org`;
    const fast = `fast-${randomUUID().slice(0, 8)}@example.net`;
    const jobs = [];
    // The slow one first: the fast one is signed and sent while the slow one's server keeps it waiting.
    for (const [i, recipient] of [slow, fast].entries()) {
      const response = await call(api.baseUrl, 'POST', '/email', {
        key: org.liveKey,
        body: email(`orders@${org.domain}`, recipient),
      });
      expect(response.status).toBe(200);
      const [accepted] = (await tap.waitForMessage(response.body.MessageID, (found) => found.length > 0)) as [
        MessageAccepted,
      ];
      jobs.push({
        accepted,
        acceptedValue: await api.deps.store.codec.encode(api.deps.store.topics.messages, accepted),
        attempt: 1,
        source: `${api.deps.store.topics.messages}:0:${i}`,
      });
    }
    const [slowId, fastId] = jobs.map((job) => job.accepted.data.messageId);

    mail.hold((address) => address === slow);
    const run = pipeline.run(jobs);
    await waitUntil(() => mail.deliveriesTo(fast) === 1, 20_000, `${fast} to be delivered while ${slow} is held`);
    expect(mail.heldCount).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const releasedAt = Date.now();
    mail.release();
    const report = await run;
    expect(report.outcomes.Delivered).toBe(2);

    const deliveredAt = async (messageId: string) => {
      const events = await tap.waitForMessage(messageId, (found) => found.some((e) => e.type === 'MessageDelivered'));
      return events.find((e) => e.type === 'MessageDelivered')!.metadata.occurredAt;
    };
    // Each Delivered says when its own server said 250.
    expect(await deliveredAt(fastId!)).toBeLessThan(releasedAt);
    expect(await deliveredAt(slowId!)).toBeGreaterThanOrEqual(releasedAt);
    expect(mail.deliveriesTo(slow)).toBe(1);
    expect(
      dataOf(tap.allEvents((e) => e.type === 'MessageDelivered' && dataOf(e).messageId === fastId)[0]).recipient,
    ).toBe(fast);
  });
});
