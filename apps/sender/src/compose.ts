import { composeMessage, signMessage, type DkimKeys, type ReturnPathSettings } from '@sendline/infra';
import type { Outgoing } from './deliver';
import type { Plan } from './plan';

/**
 * A message ready to leave (its raw, DKIM-signed MIME, and its From domain's return path when verified), or why
 * it cannot.
 */
export type Signed = { raw: Buffer; returnPathHost: string | null } | { failure: unknown };

/**
 * A signed message as it leaves: its bytes, and the return-path domain of its envelope senders, which is its From
 * domain's return path when that is verified, else the service's own (`service.domain`), as Postmark and SES do.
 * Undefined for a message that was not signed.
 */
export function outgoingOf(signed: Signed | undefined, service: ReturnPathSettings): Outgoing | undefined {
  if (!signed || !('raw' in signed)) return undefined;
  return { raw: signed.raw, returnPath: { key: service.key, domain: signed.returnPathHost ?? service.domain } };
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Step 2 of a delivery attempt (see pipeline.ts): compose and DKIM-sign each message that has recipients to send
 * to. Composing is the event loop's own work (about 1-2 ms a message): one message at a time, the loop let go
 * between two, so that a 250 arriving meanwhile (another partition's chunk, the retry consumer) has its guard
 * written after one message's work, not after a whole chunk's (500 messages composed together held a 250 back
 * for over 100 ms). The RSA signatures are made on the thread pool (signMessage), side by side, while the next
 * messages are composed. The From domain's verified return path comes with its key (DkimKeys reads both from the
 * accounts view). Keyed by message id.
 */
export async function signMessages(plans: readonly Plan[], dkimKeys: DkimKeys): Promise<Map<string, Signed>> {
  const keys = plans.map((plan) =>
    dkimKeys.sendingDomain(plan.organizationId, plan.job.accepted.data.from.email).then(
      (domain) => ({ domain }),
      (failure: unknown) => ({ failure }),
    ),
  );
  const signing: Promise<Signed>[] = [];
  for (const [i, plan] of plans.entries()) {
    const composed = await composeMessage(plan.job.accepted.data).then(
      (raw) => ({ raw }),
      (failure: unknown) => ({ failure }),
    );
    signing.push(
      keys[i]!.then(async (found): Promise<Signed> => {
        if ('failure' in found) return found;
        if ('failure' in composed) return composed;
        try {
          return {
            raw: await signMessage(composed.raw, found.domain.key),
            returnPathHost: found.domain.returnPathHost,
          };
        } catch (failure) {
          return { failure };
        }
      }),
    );
    await yieldToEventLoop();
  }
  const signed = await Promise.all(signing);
  return new Map(plans.map((plan, i) => [plan.messageId, signed[i]!]));
}
