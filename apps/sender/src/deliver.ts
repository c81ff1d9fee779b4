import { addressDomain, canonicalAddress } from '@sendline/domain';
import {
  DeliveryError,
  describeCause,
  envelopeOf,
  returnPathOf,
  type RecipientResult,
  type ReturnPathSettings,
  type SmtpDelivery,
} from '@sendline/infra';
import type { DeliveryLedger } from './ledger';
import type { Limiter } from './limiter';
import type { Plan } from './plan';

/** What one message's SMTP transactions brought back. */
export interface Delivery {
  /** Each recipient's answer, in the order the transactions ended. */
  results: RecipientResult[];
  /** The envelope sender each recipient of this run was sent with (its Return-Path), by canonical address. */
  returnPaths: Map<string, string>;
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

/** A message ready to leave: its signed bytes (one copy for every recipient) and where its bounces go. */
export interface Outgoing {
  raw: Buffer;
  returnPath: ReturnPathSettings;
}

/**
 * Step 4 of a delivery attempt (see pipeline.ts): one SMTP transaction per recipient, each with its own envelope
 * sender (`b.<token>@<return path>`, the token naming the message and the recipient) and the message's one signed
 * copy of the bytes, over the destination's pooled connections; at most `limiter`'s many at once across every
 * message of the run. Each writes the guard as soon as its 250 arrives. Every transaction is queued on the limiter
 * before this returns, in the plan's order.
 */
export function deliver(plan: Plan, outgoing: Outgoing | undefined, deps: DeliverDependencies): Promise<Delivery> {
  const delivery: Delivery = {
    results: [],
    returnPaths: new Map(),
    guardedAt: new Map(plan.fromGuard.map(({ recipient, at }) => [recipient, at])),
    answeredAt: new Map(),
    transactions: 0,
  };
  if (!outgoing || plan.toSend.length === 0) return Promise.resolve(delivery);
  const accepted = plan.job.accepted.data;
  const transactions = plan.toSend.map((recipient) => {
    let from: string;
    try {
      from = returnPathOf(accepted, recipient, outgoing.returnPath);
    } catch (error) {
      // Not a recipient of the message (no token can name it): an unknown failure, held, never sent blindly.
      const failure = new DeliveryError(describeCause(error), { kind: 'unknown', recipient });
      delivery.results.push({ recipient, accepted: false, error: failure });
      return Promise.resolve();
    }
    delivery.returnPaths.set(recipient, from);
    return deps.limiter.run(async () => {
      delivery.transactions++;
      const envelope = envelopeOf(accepted, [recipient], from);
      const results = await deps.delivery.send(addressDomain(recipient), { envelope, raw: outgoing.raw });
      const answeredAt = deps.now();
      for (const result of results) delivery.answeredAt.set(canonicalAddress(result.recipient), answeredAt);
      const taken = results.filter((result) => result.accepted);
      if (taken.length > 0) {
        // The guard, at once: nothing else runs between the 250 and this write (see DeliveryLedger).
        const guarded = taken.map((result) => canonicalAddress(result.recipient));
        try {
          const at = await deps.ledger.markAccepted(plan.messageId, guarded, taken[0]!.response, taken[0]!.host, from);
          for (const address of guarded) delivery.guardedAt.set(address, at);
        } catch (error) {
          delivery.failure = error;
        }
      }
      delivery.results.push(...results);
    });
  });
  return Promise.all(transactions).then(() => delivery);
}
