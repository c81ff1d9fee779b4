import type { DeliveryOutcome, RetryPolicy } from '@sendline/domain';
import {
  declaredRetriable,
  describeCause,
  InfrastructureError,
  type DkimKeys,
  type EventStore,
  type ReturnPathSettings,
  type SmtpDelivery,
  type SuppressionView,
} from '@sendline/infra';
import { senderCommands, type SenderCommands } from './commands';
import { outgoingOf, signMessages } from './compose';
import { deliver } from './deliver';
import type { DeliveryLedger } from './ledger';
import type { Limiter } from './limiter';
import { decideOutcomes } from './outcomes';
import { planDelivery, type DeliveryJob, type Plan } from './plan';
import type { MessageLeases } from './leases';

export type { DeliveryJob } from './plan';

/**
 * One delivery attempt of some messages, from the accepted event to the recorded outcomes. The rules
 * are the domain's (message decider, classifyDeliveryAttempt, deliveryOutcomeOf, the suppression
 * decider, run through infra's CommandHandler: commands.ts); this wires them to the ledger, the SMTP
 * transport and the event store, one step after the other, each step's result plain data for the next:
 *
 * 1. Read the ledger (what earlier runs did), claiming each message for the MessageAccepted it is read from
 *    (a second copy of a message's MessageAccepted is skipped whole: one message, one delivery), and plan
 *    each message (plan.ts): recipients already concluded are skipped; recipients whose server already said
 *    250 (the guard) get their Delivered from the ledger, without a send; the others are sent to.
 * 2. Compose and DKIM-sign each message that has recipients to send to (compose.ts): one copy of the bytes per
 *    message, whatever its recipients. Its return-path domain: the From domain's return path when verified, else the
 *    service's own (`returnPath.domain`).
 * 3. Append MessageSent (first attempts): the delivery is under way. Its event id is the message's
 *    (eventIdFor(messageId, 'sent')): appended again after a fault (Kafka took it, the run failed before the
 *    ledger's `sent` was written with its outcomes), it is the same event, and the activity store shows it once.
 * 4. Deliver (deliver.ts): one SMTP transaction per (message, recipient), each with the recipient's own envelope
 *    sender (`b.<token>@<return-path domain>`), at most `limiter`'s many at once; each writes the guard (with that
 *    envelope sender) as soon as its server's 250 arrives.
 * 5. Decide the outcomes per recipient (outcomes.ts; each records the envelope sender it was sent with), with
 *    SuppressionAdded for hard bounces and a retry
 *    record (DeliveryRetryScheduled) for the deferred ones; append them all at once; then write the ledger and
 *    apply the suppressions to the suppression view (so the next send to the address is refused at once).
 *
 * Where each recipient stands is the domain's message state, built from what the attempt has in hand (plan.ts):
 * the MessageAccepted event, the MessageSent it decides (appended once, see the ledger), and, on a retry, the
 * recipients of the retry record, each failed `attempt - 1` times. Recipients concluded by earlier attempts are
 * not in a retry record and are never touched by it.
 *
 * A failure that a run cannot settle (an unknown delivery error, a message that cannot be signed, the
 * guard not written) does not stop the other messages: their outcomes are recorded, then the run throws
 * (non-retriable when trying again could send blindly or cannot help), naming the messages.
 */

export interface RunReport {
  messages: number;
  transactions: number;
  outcomes: Record<DeliveryOutcome['kind'], number>;
  /** Recipients skipped: concluded or owned by the retry schedule already. */
  skipped: number;
  /** Copies of a MessageAccepted skipped: the message is delivered from another copy. */
  duplicates: number;
}

export interface PipelineDependencies {
  store: EventStore;
  ledger: DeliveryLedger;
  dkimKeys: DkimKeys;
  /**
   * The key of the return-path tokens and the service's own return-path domain (SENDLINE_RETURN_PATH_DOMAIN): the
   * envelope sender's domain of a message whose From domain has no verified return path.
   */
  returnPath: ReturnPathSettings;
  delivery: SmtpDelivery;
  suppressions: SuppressionView;
  limiter: Limiter;
  /** One run of a message at a time across the sender's copies (leases.ts); without it, within this process only. */
  leases?: MessageLeases;
  retryPolicy: RetryPolicy;
  now: () => number;
  random: () => number;
}

/** A message the run could not settle: a failure (not signed, a guard not written) or recipients held. */
interface Unsettled {
  messageId: string;
  failure?: unknown;
  held: readonly string[];
}

export class DeliveryPipeline {
  private readonly commands: SenderCommands;
  /** The run each message is in now, in this process (see `run`). */
  private readonly running = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: PipelineDependencies) {
    this.commands = senderCommands(deps.store);
  }

  /**
   * One attempt of `jobs`, after any run of this process that holds one of their messages has ended: two runs of
   * one message at once would both plan before either's guard is written, and both send. Kafka's partitions keep
   * one consumer to a message, but kafkajs restarts a crashed consumer (Kafka away too long) without waiting for
   * the batch in hand: that batch's handler goes on beside the new one, which fetches the same messages again.
   * Waiting, the later run reads the earlier one's guards and ledger, and sends nothing twice.
   */
  async run(jobs: readonly DeliveryJob[]): Promise<RunReport> {
    const messageIds = new Set(jobs.map((job) => job.accepted.data.messageId));
    for (;;) {
      const earlier = [...messageIds].flatMap((id) => this.running.get(id) ?? []);
      if (earlier.length === 0) break;
      await Promise.allSettled(earlier);
    }
    // Registered in the same turn as the check above: a run waits only for runs that wait for nothing. Across
    // copies of the sender, the run holds its messages' leases (leases.ts) first.
    const attempt = this.deps.leases ? this.leased(this.deps.leases, [...messageIds], jobs) : this.attempt(jobs);
    for (const id of messageIds) this.running.set(id, attempt);
    try {
      return await attempt;
    } finally {
      for (const id of messageIds) if (this.running.get(id) === attempt) this.running.delete(id);
    }
  }

  private async leased(leases: MessageLeases, messageIds: string[], jobs: readonly DeliveryJob[]): Promise<RunReport> {
    const held = await leases.hold(messageIds);
    try {
      return await this.attempt(jobs);
    } finally {
      await held.release();
    }
  }

  private async attempt(jobs: readonly DeliveryJob[]): Promise<RunReport> {
    const report: RunReport = {
      messages: jobs.length,
      transactions: 0,
      outcomes: { Delivered: 0, HardBounced: 0, PolicyRejected: 0, SoftBounced: 0, Deferred: 0 },
      skipped: 0,
      duplicates: 0,
    };
    if (jobs.length === 0) return report;

    // 1. Plan.
    const { plans, duplicates } = await this.plan(jobs);
    report.duplicates = duplicates;
    for (const plan of plans) report.skipped += plan.skipped;

    // 2. Compose and sign. A message that cannot be signed sends nothing (its guarded recipients still conclude).
    const signed = await signMessages(
      plans.filter((plan) => plan.toSend.length > 0),
      this.deps.dkimKeys,
    );
    const rawOf = (plan: Plan) => {
      const message = signed.get(plan.messageId);
      return message && 'raw' in message ? message.raw : undefined;
    };

    // 3. Sent, before anything leaves.
    const sending = plans.filter(
      (plan) => plan.sent.length > 0 && (rawOf(plan) !== undefined || plan.fromGuard.length > 0),
    );
    await this.commands.messages.commit(sending.flatMap((plan) => plan.sent));

    // 4. Deliver.
    const deliveries = await Promise.all(
      plans.map((plan) => deliver(plan, outgoingOf(signed.get(plan.messageId), this.deps.returnPath), this.deps)),
    );
    for (const delivery of deliveries) report.transactions += delivery.transactions;

    // 5. Outcomes: appended (outcomes, suppressions and retry records at once) before the ledger says they were,
    // and the ledger written before the view, so that a run repeated after a fault finds them recorded.
    const context = { commands: this.commands, retryPolicy: this.deps.retryPolicy, now: this.deps.now };
    const outcomes = plans.map((plan, i) => decideOutcomes(plan, deliveries[i]!, context));
    for (const kind of outcomes.flatMap((outcome) => outcome.kinds)) report.outcomes[kind]++;
    await this.commands.messages.commit(outcomes.flatMap((outcome) => outcome.events));
    await this.deps.ledger.record(
      outcomes.flatMap((outcome) => outcome.ledger),
      sending.map((plan) => plan.messageId),
    );
    await this.deps.suppressions.apply(outcomes.flatMap((outcome) => outcome.suppressions));

    const unsettled = plans.flatMap((plan, i): Unsettled[] => {
      const message = signed.get(plan.messageId);
      const failure = message && 'failure' in message ? message.failure : deliveries[i]!.failure;
      const held = [...plan.held, ...outcomes[i]!.held];
      return failure !== undefined || held.length > 0 ? [{ messageId: plan.messageId, failure, held }] : [];
    });
    if (unsettled.length > 0) throw failureOf(unsettled);
    return report;
  }

  /** Step 1: one plan per message, from its ledger (read, and claimed by a first attempt's MessageAccepted). */
  private async plan(jobs: readonly DeliveryJob[]): Promise<{ plans: Plan[]; duplicates: number }> {
    // One job per message: a second copy of a MessageAccepted in the same run is dropped before planning (the
    // ledger's claim would skip it too; this keeps two plans from ever sharing a message).
    const seen = new Set<string>();
    const unique = jobs.filter((job) => {
      const id = job.accepted.data.messageId;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
    let duplicates = jobs.length - unique.length;
    const ledgers = await this.deps.ledger.read(
      unique.map((job) => ({
        messageId: job.accepted.data.messageId,
        ...(job.attempt === 1 && job.source !== undefined && { claim: job.source }),
      })),
    );
    const plans = unique.flatMap((job) => {
      const ledger = ledgers.get(job.accepted.data.messageId);
      if (job.attempt === 1 && job.source !== undefined && ledger?.claim !== undefined && ledger.claim !== job.source) {
        // Another copy of this MessageAccepted claimed the message: it is delivered from that one, only.
        duplicates++;
        return [];
      }
      return [planDelivery(job, ledger, { commands: this.commands, now: this.deps.now(), random: this.deps.random() })];
    });
    return { plans, duplicates };
  }
}

function failureOf(unsettled: readonly Unsettled[]): InfrastructureError {
  const blind = unsettled.some(
    (message) =>
      message.held.length > 0 || (message.failure !== undefined && declaredRetriable(message.failure) !== true),
  );
  const what = unsettled
    .map((message) => {
      if (message.held.length > 0)
        return `${message.messageId}: unknown delivery failure for ${message.held.join(', ')} (held)`;
      return `${message.messageId}: ${describeCause(message.failure)}`;
    })
    .join('; ');
  return new InfrastructureError(
    blind ? 'DeliveryNotSettled' : 'DeliveryInterrupted',
    `delivery not settled: ${what}`,
    {
      retriable: !blind,
      cause: unsettled[0]?.failure,
    },
  );
}
