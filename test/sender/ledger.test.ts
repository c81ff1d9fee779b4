import { randomUUID } from 'node:crypto';
import { DeliveryLedger } from '@sendline/sender';
import { createRedis, type Redis } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addresses } from '../support/services';

/**
 * A guard Redis did not take (it was away) is not forgotten by the process that earned it: a run of the same
 * message in this process — the consume loop takes a failed batch one event at a time — finds the recipient
 * accepted and sends nothing again, and the guard reaches Redis with the next read.
 */
describe('the delivery ledger when Redis does not take a guard', () => {
  let redis: Redis;
  let unreachable: Redis;

  beforeAll(() => {
    redis = createRedis(addresses.redisUrl);
    // Nothing listens on port 1: every guard write fails at once.
    unreachable = createRedis('redis://127.0.0.1:1');
    unreachable.on('error', () => undefined);
  });
  afterAll(() => {
    redis.disconnect();
    unreachable.disconnect();
  });

  it('keeps the guard in memory, answers it from the next read, and writes it then', async () => {
    const group = `test-ledger-${randomUUID().slice(0, 8)}`;
    const ledger = new DeliveryLedger(redis, 60_000, group, { guardRedis: unreachable, guardAttempts: 2 });
    const messageId = randomUUID();
    const returnPath = 'b.abc@bounces.sendline.dev';
    await expect(
      ledger.markAccepted(messageId, ['ann@example.net'], '250 2.0.0 OK', 'mx.example.net', returnPath),
    ).rejects.toThrow(/guard could not be written/);
    const read = await ledger.read([{ messageId }]);
    expect(read.get(messageId)?.recipients.get('ann@example.net')).toMatchObject({
      state: 'accepted',
      response: '250 2.0.0 OK',
      host: 'mx.example.net',
      returnPath,
    });
    // Written now: a sender started afresh (no memory) reads it from Redis.
    const fresh = new DeliveryLedger(redis, 60_000, group);
    const again = await fresh.read([{ messageId }]);
    expect(again.get(messageId)?.recipients.get('ann@example.net')).toMatchObject({ state: 'accepted', returnPath });
  });

  it('keeps the envelope sender in the guard Redis applies', async () => {
    const ledger = new DeliveryLedger(redis, 60_000, `test-ledger-${randomUUID().slice(0, 8)}`);
    const messageId = randomUUID();
    const returnPath = 'b.xyz@bounces.shop.example';
    await ledger.markAccepted(messageId, ['bo@example.net'], '250 OK', 'mx.example.net', returnPath);
    const read = await ledger.read([{ messageId }]);
    expect(read.get(messageId)?.recipients.get('bo@example.net')).toMatchObject({ state: 'accepted', returnPath });
  });
});
