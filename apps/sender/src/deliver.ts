import { addressDomain, canonicalAddress } from '@sendline/domain';
import { envelopeOf, type RecipientResult, type SmtpDelivery } from '@sendline/infra';
import type { DeliveryLedger } from './ledger';
import type { Limiter } from './limiter';
import type { Plan } from './plan';

/** What one message's SMTP transactions brought back. */
export interface Delivery {
  /** Each recipient's answer, in the order the transactions ended. */
  results: RecipientResult[];
  /** When each recipient's guard was applied (Redis's clock): this run's, and earlier runs' (from the plan). */
  guardedAt: Map<string, number>;
  /**
   * When this run's server answered each recipient (the sender's clock, as its transaction ended): the time its
   * outcome happened (Delivered at the 250, a bounce at the refusal), not when the run's last transaction ended.
   */
  answeredAt: Map<string, number>;
  /** A guard Redis did not take (DeliveryGuardFailed): the run fails, non-retriable. */
  failure?: unknown;
  transactions: number;
}

export interface DeliverDependencies {
  delivery: SmtpDelivery;
  ledger: DeliveryLedger;
  limiter: Limiter;
  now: () => number;
}

/**
 * Step 4 of a delivery attempt (see pipeline.ts): one SMTP transaction per recipient domain, at most `limiter`'s
 * many at once across every message of the run; each writes the guard for the recipients its server accepted as
 * soon as its 250 arrives. Every transaction is queued on the limiter before this returns, in the plan's order.
 */
export function deliver(plan: Plan, raw: Buffer | undefined, deps: DeliverDependencies): Promise<Delivery> {
  const delivery: Delivery = {
    results: [],
    guardedAt: new Map(plan.fromGuard.map(({ recipient, at }) => [recipient, at])),
    answeredAt: new Map(),
    transactions: 0,
  };
  if (!raw || plan.toSend.length === 0) return Promise.resolve(delivery);
  const byDomain = new Map<string, string[]>();
  for (const recipient of plan.toSend) {
    const domain = addressDomain(recipient);
    byDomain.set(domain, [...(byDomain.get(domain) ?? []), recipient]);
  }
  const transactions = [...byDomain].map(([domain, recipients]) =>
    deps.limiter.run(async () => {
      delivery.transactions++;
      const envelope = envelopeOf(plan.job.accepted.data, recipients);
      const results = await deps.delivery.send(domain, { envelope, raw });
      const answeredAt = deps.now();
      for (const result of results) delivery.answeredAt.set(canonicalAddress(result.recipient), answeredAt);
      const accepted = results.filter((result) => result.accepted);
      if (accepted.length > 0) {
        // The guard, at once: nothing else runs between the 250 and this write (see DeliveryLedger).
        const guarded = accepted.map((result) => canonicalAddress(result.recipient));
        try {
          const at = await deps.ledger.markAccepted(plan.messageId, guarded, accepted[0]!.response, accepted[0]!.host);
          for (const recipient of guarded) delivery.guardedAt.set(recipient, at);
        } catch (error) {
          delivery.failure = error;
        }
      }
      delivery.results.push(...results);
    }),
  );
  return Promise.all(transactions).then(() => delivery);
}
