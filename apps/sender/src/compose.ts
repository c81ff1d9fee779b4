import { composeMessage, signMessage, type DkimKeys } from '@sendline/infra';
import type { Plan } from './plan';

/** A message ready to leave (its raw, DKIM-signed MIME), or why it cannot. */
export type Signed = { raw: Buffer } | { failure: unknown };

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Step 2 of a delivery attempt (see pipeline.ts): compose and DKIM-sign each message that has recipients to send
 * to, one message at a time, the event loop let go between two. This is the CPU-heavy step (about 1-4 ms a
 * message), and other transactions are in flight meanwhile (another partition's chunk, the retry consumer): a
 * 250 arriving now has its guard written after one message's work, not after a whole chunk's (500 messages
 * composed together held a 250 back for over 100 ms). Keyed by message id.
 */
export async function signMessages(plans: readonly Plan[], dkimKeys: DkimKeys): Promise<Map<string, Signed>> {
  const signed = new Map<string, Signed>();
  const keys = plans.map((plan) =>
    dkimKeys.keyFor(plan.organizationId, plan.job.accepted.data.from.email).then(
      (key) => ({ key }),
      (error: unknown) => ({ error }),
    ),
  );
  for (const [i, plan] of plans.entries()) {
    try {
      const found = await keys[i]!;
      if ('error' in found) throw found.error;
      signed.set(plan.messageId, { raw: signMessage(await composeMessage(plan.job.accepted.data), found.key) });
    } catch (failure) {
      signed.set(plan.messageId, { failure });
    }
    await yieldToEventLoop();
  }
  return signed;
}
