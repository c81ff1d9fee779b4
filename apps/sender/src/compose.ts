import { composeMessage, signMessage, type DkimKeys, type DkimSigningKey } from '@sendline/infra';
import type { Plan } from './plan';

/** A message ready to leave (its raw, DKIM-signed MIME), or why it cannot. */
export type Signed = { raw: Buffer } | { failure: unknown };

export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Step 2 of a delivery attempt (see pipeline.ts): the DKIM key of each message's From domain, looked up for all of
 * a run's messages at once (a key is read once and cached: DkimKeys), then each message composed and signed when
 * its turn comes (`sign`). This is the CPU-heavy step (about 1-4 ms a message): the pipeline signs one message at a
 * time and lets the event loop go between two, so a 250 arriving meanwhile has its guard written after one
 * message's work, not after a whole chunk's (500 messages composed together held a 250 back for over 100 ms), and a
 * signed message leaves while the next one is composed.
 */
export class MessageSigner {
  private readonly keys = new Map<string, Promise<{ key: DkimSigningKey } | { error: unknown }>>();

  constructor(plans: readonly Plan[], dkimKeys: DkimKeys) {
    for (const plan of plans) {
      this.keys.set(
        plan.messageId,
        dkimKeys.keyFor(plan.organizationId, plan.job.accepted.data.from.email).then(
          (key) => ({ key }),
          (error: unknown) => ({ error }),
        ),
      );
    }
  }

  async sign(plan: Plan): Promise<Signed> {
    try {
      const found = await this.keys.get(plan.messageId)!;
      if ('error' in found) throw found.error;
      return { raw: await signMessage(await composeMessage(plan.job.accepted.data), found.key) };
    } catch (failure) {
      return { failure };
    }
  }
}
