import type { DeliveryOutcome, RetryPolicy } from '@sendline/domain';
import {
  declaredRetriable,
  describeCause,
  InfrastructureError,
  type DkimKeys,
  type EventStore,
  type SmtpDelivery,
  type SuppressionView,
} from '@sendline/infra';
import { senderCommands, type SenderCommands } from './commands';
import { MessageSigner, yieldToEventLoop, type Signed } from './compose';
import { deliver, type Delivery } from './deliver';
import type { DeliveryLedger } from './ledger';
import type { Limiter } from './limiter';
import { decideOutcomes, type OutcomeContext, type Outcomes } from './outcomes';
import { planDelivery, type DeliveryJob, type Plan } from './plan';

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
 * 2. Compose and DKIM-sign the messages that have recipients to send to (compose.ts), one at a time; each one
 *    goes on to steps 3 and 4 as soon as it is signed, while the next is composed.
 * 3. Append the message's MessageSent (first attempts): the delivery is under way. Its event id is the message's
 *    (eventIdFor(messageId, 'sent')): appended again after a fault (Kafka took it, the ledger's `sent` was
 *    not written), it is the same event, and the activity store shows it once. The event store's group commit
 *    appends the Sents of messages signed meanwhile together.
 * 4. Deliver (deliver.ts): one SMTP transaction per (message, recipient domain), at most `limiter`'s many at
 *    once; each writes the guard for the recipients its server accepted as soon as its 250 arrives. The message's
 *    outcomes are decided when its last transaction ends (so a Delivered says when its server took it).
 * 5. Once every message of the run is done: the outcomes per recipient (outcomes.ts), with SuppressionAdded for
 *    hard bounces and a retry record (DeliveryRetryScheduled) for the deferred ones, are appended all at once;
 *    then the ledger is written and the suppressions applied to the suppression view (so the next send to the address is refused at once).
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
  delivery: SmtpDelivery;
  suppressions: SuppressionView;
  limiter: Limiter;
  retryPolicy: RetryPolicy;
  now: () => number;
  random: () => number;
}

/**
 * The most messages a run streams (each leaves as soon as it is signed). A larger run means messages were waiting
 * (the sender is behind): it signs them all, appends their Sents at once and then delivers them, which costs less
 * CPU a message (measured with bench:e2e's flat-out phase: about 4 ms a message against 6.5 ms streamed).
 */
const STREAMED_RUN = 50;

/** One message's attempt: delivered (or not, when it could not be signed) with its outcomes; or never started. */
type Attempt = { delivery: Delivery; outcomes: Outcomes; signingFailure?: unknown } | { notStarted: unknown };

/** A message the run could not settle: a failure (not signed, a guard not written) or recipients held. */
interface Unsettled {
  messageId: string;
  failure?: unknown;
  held: readonly string[];
}

export class DeliveryPipeline {
  private readonly commands: SenderCommands;

  constructor(private readonly deps: PipelineDependencies) {
    this.commands = senderCommands(deps.store);
  }

  async run(jobs: readonly DeliveryJob[]): Promise<RunReport> {
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

    // 2-4, message by message: each is signed in turn and, as soon as it is, its Sent is appended and its
    // transactions queued, while the next one is signed (a message never waits for the rest of its chunk to be
    // composed). The Sents of the messages signed while an append is in flight go together in the next one (no
    // timer: a lone message's Sent goes at once). A run larger than STREAMED_RUN goes in one wave, once all its
    // messages are signed. Once a Sent cannot be appended, no further message is started.
    const signer = new MessageSigner(plans, this.deps.dkimKeys);
    const context = { commands: this.commands, retryPolicy: this.deps.retryPolicy, now: this.deps.now };
    const signed: (Signed | undefined)[] = [];
    const attempts: Promise<Attempt>[] = [];
    const ready: number[] = [];
    const smallestWave = plans.length > STREAMED_RUN ? plans.length : 1;
    let signing = true;
    let wake: (() => void) | undefined;
    let stopped: unknown;
    const waves = (async () => {
      for (;;) {
        if (ready.length === 0 && !signing) return;
        if (ready.length < smallestWave && signing) {
          await new Promise<void>((resolve) => (wake = resolve));
          continue;
        }
        const wave = ready.splice(0);
        stopped ??= await this.startSending(wave.map((i) => ({ plan: plans[i]!, signed: signed[i] })));
        for (const i of wave) {
          attempts[i] =
            stopped !== undefined
              ? Promise.resolve({ notStarted: stopped })
              : this.deliverMessage(plans[i]!, signed[i], context);
          attempts[i].catch(() => undefined); // awaited below, with the others
        }
      }
    })();
    for (const [i, plan] of plans.entries()) {
      if (stopped !== undefined) break;
      signed[i] = plan.toSend.length > 0 ? await signer.sign(plan) : undefined;
      ready.push(i);
      wake?.();
      if (signed[i]) await yieldToEventLoop();
    }
    signing = false;
    wake?.();
    await waves;
    for (const i of plans.keys()) attempts[i] ??= Promise.resolve({ notStarted: stopped });
    const results = await Promise.all(attempts);
    for (const result of results) if ('delivery' in result) report.transactions += result.delivery.transactions;

    // 5. Outcomes: appended (outcomes, suppressions and retry records at once) before the ledger says they were,
    // and the ledger written before the view, so that a run repeated after a fault finds them recorded.
    const outcomes = results.flatMap((result) => ('outcomes' in result ? [result.outcomes] : []));
    for (const kind of outcomes.flatMap((outcome) => outcome.kinds)) report.outcomes[kind]++;
    await this.commands.messages.commit(outcomes.flatMap((outcome) => outcome.events));
    await this.deps.ledger.record(outcomes.flatMap((outcome) => outcome.ledger));
    await this.deps.suppressions.apply(outcomes.flatMap((outcome) => outcome.suppressions));

    const unsettled = plans.flatMap((plan, i): Unsettled[] => {
      const result = results[i]!;
      if ('notStarted' in result) return [{ messageId: plan.messageId, failure: result.notStarted, held: plan.held }];
      const failure = result.signingFailure ?? result.delivery.failure;
      const held = [...plan.held, ...result.outcomes.held];
      return failure !== undefined || held.length > 0 ? [{ messageId: plan.messageId, failure, held }] : [];
    });
    if (unsettled.length > 0) {
      // A message not started (its Sent not appended or not marked: Kafka or Redis away) is tried again with the
      // run, and the run fails with that cause, unless another message makes trying again blind.
      const failure = failureOf(unsettled);
      const interrupted = results.find((result) => 'notStarted' in result);
      throw interrupted && declaredRetriable(failure) === true ? interrupted.notStarted : failure;
    }
    return report;
  }

  /**
   * Step 3 for the messages signed since the last append: their Sents appended at once (the messages with a
   * recipient to send to, or concluded by the guard) and marked in the ledger. Resolves with the failure when
   * they could not be (nothing of these messages is sent then), else undefined.
   */
  private async startSending(messages: { plan: Plan; signed: Signed | undefined }[]): Promise<unknown> {
    const sending = messages
      .filter(({ plan, signed }) => plan.sent.length > 0 && ((signed && 'raw' in signed) || plan.fromGuard.length > 0))
      .map(({ plan }) => plan);
    try {
      await this.commands.messages.commit(sending.flatMap((plan) => plan.sent));
      await this.deps.ledger.markSent(sending.map((plan) => plan.messageId));
      return undefined;
    } catch (failure) {
      return failure;
    }
  }

  /** Step 4 for one message, and its outcomes decided the moment they are known (appended with the run's). */
  private async deliverMessage(plan: Plan, signed: Signed | undefined, context: OutcomeContext): Promise<Attempt> {
    const delivery = await deliver(plan, signed && 'raw' in signed ? signed.raw : undefined, this.deps);
    return {
      delivery,
      outcomes: decideOutcomes(plan, delivery, context),
      signingFailure: signed && 'failure' in signed ? signed.failure : undefined,
    };
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
