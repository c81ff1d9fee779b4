import {
  addressDomain,
  canonicalAddress,
  classifyDeliveryAttempt,
  decideMessage,
  decideSuppression,
  deliveryOutcomeOf,
  evolveMessage,
  initialMessageState,
  initialSuppressionState,
  suppressionForHardBounce,
  type DeliveryClassification,
  type DeliveryOutcome,
  type MessageAccepted,
  type MessageEvent,
  type MessageState,
  type RetryPolicy,
  type SuppressionEvent,
} from '@sendline/domain';
import {
  composeMessage,
  declaredRetriable,
  describeCause,
  envelopeOf,
  InfrastructureError,
  signMessage,
  type DkimKeys,
  type EventStore,
  type RecipientResult,
  type SmtpDelivery,
  type StoredEvent,
  type SuppressionView,
} from '@sendline/infra';
import { eventIdFor } from './ids';
import type { DeliveryLedger, LedgerUpdate, MessageLedger, RecipientEntry } from './ledger';
import type { Limiter } from './limiter';
import type { DeliveryRetryScheduled } from './retryRecord';

/**
 * One delivery attempt of some messages, from the accepted event to the recorded outcomes. The rules
 * are the domain's (message decider, classifyDeliveryAttempt, deliveryOutcomeOf, the suppression
 * decider); this wires them to the ledger, the SMTP transport and the event store:
 *
 * 1. Read the ledger (what earlier runs did) and plan each message: recipients already concluded are
 *    skipped; recipients whose server already said 250 (the guard) get their Delivered from the ledger,
 *    without a send; the others are sent to.
 * 2. Compose and DKIM-sign each message that has recipients to send to.
 * 3. Append MessageSent (first attempts, once): the delivery is under way.
 * 4. Deliver: one SMTP transaction per (message, recipient domain), at most `limiter`'s many at once;
 *    after each, the guard is written for the recipients the server accepted.
 * 5. Decide the outcomes per recipient, with SuppressionAdded for hard bounces and a retry record
 *    (DeliveryRetryScheduled) for the deferred ones; append them all at once; then write the ledger and
 *    apply the suppressions to the suppression view (so the next send to the address is refused at once).
 *
 * The message aggregate's state is rebuilt from what the attempt has in hand: the MessageAccepted event,
 * the MessageSent it decides (appended once, see the ledger), and, on a retry, the deferrals the retry
 * record stands for (its recipients, each deferred `attempt - 1` times). Recipients concluded by earlier
 * attempts are not in a retry record and are never touched by it.
 *
 * A failure that a run cannot settle (an unknown delivery error, a message that cannot be signed, the
 * guard not written) does not stop the other messages: their outcomes are recorded, then the run throws
 * (non-retriable when trying again could send blindly or cannot help), naming the messages.
 */

export interface DeliveryJob {
  accepted: MessageAccepted;
  /** The MessageAccepted event's Kafka value, carried into the retry record. */
  acceptedValue: Buffer;
  /** This attempt's number: 1 for the first. */
  attempt: number;
  /** When the first attempt was made; absent on the first attempt (it is now). */
  firstAttemptAt?: number;
  /** The recipients to try (a retry: the deferred ones); absent: every active recipient. */
  recipients?: readonly string[];
}

export interface RunReport {
  messages: number;
  transactions: number;
  outcomes: Record<DeliveryOutcome['kind'], number>;
  /** Recipients skipped: concluded or owned by the retry schedule already. */
  skipped: number;
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

interface Plan {
  job: DeliveryJob;
  messageId: string;
  organizationId: string;
  state: MessageState;
  firstAttemptAt: number;
  random: number;
  sentEvents: MessageEvent[];
  appendSent: boolean;
  toSend: string[];
  fromGuard: [string, Extract<RecipientEntry, { state: 'accepted' }>][];
  held: string[];
  raw?: Buffer;
  results: RecipientResult[];
  failure?: unknown;
}

/** The reply code at the start of a server's answer ("250 2.0.0 OK" → 250); 250 when it has none. */
function replyCode(response: string): number {
  const match = /^(\d{3})/.exec(response.trim());
  return match ? Number(match[1]) : 250;
}

export class DeliveryPipeline {
  constructor(private readonly deps: PipelineDependencies) {}

  async run(jobs: readonly DeliveryJob[]): Promise<RunReport> {
    const report: RunReport = {
      messages: jobs.length,
      transactions: 0,
      outcomes: { Delivered: 0, HardBounced: 0, PolicyRejected: 0, SoftBounced: 0, Deferred: 0 },
      skipped: 0,
    };
    if (jobs.length === 0) return report;
    const ledgers = await this.deps.ledger.read(jobs.map((job) => job.accepted.data.messageId));
    const plans = jobs.map((job) => this.plan(job, ledgers.get(job.accepted.data.messageId), report));

    // 2. Compose and sign.
    await Promise.all(
      plans
        .filter((plan) => plan.toSend.length > 0)
        .map(async (plan) => {
          try {
            const key = await this.deps.dkimKeys.keyFor(plan.organizationId, plan.job.accepted.data.from.email);
            plan.raw = await signMessage(await composeMessage(plan.job.accepted.data), key);
          } catch (error) {
            plan.failure = error;
            plan.toSend = [];
          }
        }),
    );

    // 3. Sent, before anything leaves.
    const sending = plans.filter((plan) => plan.appendSent && (plan.toSend.length > 0 || plan.fromGuard.length > 0));
    await this.deps.store.append(sending.flatMap((plan) => plan.sentEvents) as StoredEvent[]);
    await this.deps.ledger.markSent(sending.map((plan) => plan.messageId));

    // 4. Deliver.
    await Promise.all(plans.flatMap((plan) => this.deliver(plan, report)));

    // 5. Outcomes.
    const events: StoredEvent[] = [];
    const suppressions: SuppressionEvent[] = [];
    const updates: LedgerUpdate[] = [];
    for (const plan of plans) this.decideOutcomes(plan, events, suppressions, updates, report);
    await this.deps.store.append(events);
    await this.deps.ledger.record(updates);
    await this.deps.suppressions.apply(suppressions);

    const failed = plans.filter((plan) => plan.failure !== undefined || plan.held.length > 0);
    if (failed.length > 0) throw this.failureOf(failed);
    return report;
  }

  private plan(job: DeliveryJob, ledger: MessageLedger | undefined, report: RunReport): Plan {
    const accepted = job.accepted;
    const { messageId } = accepted.data;
    const organizationId = accepted.metadata.organizationId;
    const now = this.deps.now();
    let state = evolveMessage(initialMessageState(), accepted);
    const sentEvents = decideMessage(
      {
        type: 'RecordSent',
        data: { messageId },
        metadata: { organizationId, now, eventIds: [eventIdFor(messageId, 'sent')] },
      },
      state,
    );
    for (const event of sentEvents) state = evolveMessage(state, event);
    const candidates = job.recipients ?? accepted.data.activeRecipients;
    if (job.attempt > 1) {
      // The deferrals this retry stands for: each of its recipients failed `attempt - 1` times.
      for (const recipient of candidates) {
        state = evolveMessage(state, {
          type: 'MessageDeferred',
          data: {
            messageId,
            recipient,
            reason: 'response',
            summary: 'deferred (rebuilt from the retry record)',
            attempt: job.attempt - 1,
            nextAttemptAt: now,
          },
          metadata: {
            eventId: eventIdFor(messageId, recipient, 'Deferred', job.attempt - 1),
            organizationId,
            occurredAt: now,
            schemaVersion: 1,
          },
        });
      }
    }
    const plan: Plan = {
      job,
      messageId,
      organizationId,
      state,
      firstAttemptAt: job.firstAttemptAt ?? now,
      random: this.deps.random(),
      sentEvents,
      appendSent: job.attempt === 1 && !ledger?.sent,
      toSend: [],
      fromGuard: [],
      held: [],
      results: [],
    };
    for (const recipient of candidates.map(canonicalAddress)) {
      const entry = ledger?.recipients.get(recipient);
      if (!entry) plan.toSend.push(recipient);
      else if (entry.state === 'accepted') plan.fromGuard.push([recipient, entry]);
      else if (entry.state === 'held') plan.held.push(recipient);
      else if (entry.state === 'deferred' && entry.attempt < job.attempt) plan.toSend.push(recipient);
      else report.skipped++;
    }
    return plan;
  }

  private deliver(plan: Plan, report: RunReport): Promise<void>[] {
    const raw = plan.raw;
    if (!raw || plan.toSend.length === 0) return [];
    const byDomain = new Map<string, string[]>();
    for (const recipient of plan.toSend) {
      const domain = addressDomain(recipient);
      byDomain.set(domain, [...(byDomain.get(domain) ?? []), recipient]);
    }
    return [...byDomain].map(([domain, recipients]) =>
      this.deps.limiter.run(async () => {
        report.transactions++;
        const envelope = envelopeOf(plan.job.accepted.data, recipients);
        const results = await this.deps.delivery.send(domain, { envelope, raw });
        const accepted = results.filter((result) => result.accepted);
        if (accepted.length > 0) {
          try {
            await this.deps.ledger.markAccepted(
              plan.messageId,
              accepted.map((result) => canonicalAddress(result.recipient)),
              accepted[0]!.response,
              accepted[0]!.host,
              this.deps.now(),
            );
          } catch (error) {
            plan.failure = error;
          }
        }
        plan.results.push(...results);
      }),
    );
  }

  private decideOutcomes(
    plan: Plan,
    events: StoredEvent[],
    suppressions: SuppressionEvent[],
    updates: LedgerUpdate[],
    report: RunReport,
  ): void {
    const { messageId, organizationId, job } = plan;
    const deferred: { recipient: string; nextAttemptAt: number }[] = [];
    const observed: { recipient: string; classification: DeliveryClassification; server: string }[] = [];
    for (const [recipient, entry] of plan.fromGuard) {
      observed.push({
        recipient,
        classification: classifyDeliveryAttempt({
          kind: 'response',
          code: replyCode(entry.response),
          text: entry.response,
        }),
        server: entry.host,
      });
    }
    for (const result of plan.results) {
      const recipient = canonicalAddress(result.recipient);
      if (result.accepted) {
        const attempt = { kind: 'response' as const, code: replyCode(result.response), text: result.response };
        observed.push({ recipient, classification: classifyDeliveryAttempt(attempt), server: result.host });
        continue;
      }
      const attempt = result.error.attempt;
      if (!attempt) {
        plan.held.push(recipient);
        updates.push({ messageId, recipient, entry: { state: 'held', error: describeCause(result.error) } });
        continue;
      }
      observed.push({ recipient, classification: classifyDeliveryAttempt(attempt), server: result.error.host ?? '' });
    }
    for (const { recipient, classification, server } of observed) {
      const now = this.deps.now();
      const outcome = deliveryOutcomeOf(classification, {
        attempt: job.attempt,
        firstAttemptAt: plan.firstAttemptAt,
        now,
        random: plan.random,
        destinationServer: server,
        policy: this.deps.retryPolicy,
      });
      const decided = decideMessage(
        {
          type: 'RecordDeliveryOutcome',
          data: { messageId, recipient, outcome },
          metadata: { organizationId, now, eventIds: [eventIdFor(messageId, recipient, outcome.kind, job.attempt)] },
        },
        plan.state,
      );
      for (const event of decided) {
        plan.state = evolveMessage(plan.state, event);
        events.push(event as StoredEvent);
        if (event.type === 'MessageHardBounced') {
          const added = decideSuppression(
            {
              type: 'AddSuppression',
              data: suppressionForHardBounce(event),
              metadata: { organizationId, now, eventIds: [eventIdFor(messageId, recipient, 'SuppressionAdded')] },
            },
            initialSuppressionState(),
          );
          suppressions.push(...added);
          events.push(...(added as StoredEvent[]));
        }
      }
      report.outcomes[outcome.kind]++;
      if (outcome.kind === 'Deferred') {
        deferred.push({ recipient, nextAttemptAt: outcome.nextAttemptAt });
        updates.push({ messageId, recipient, entry: { state: 'deferred', attempt: outcome.attempt } });
      } else {
        updates.push({ messageId, recipient, entry: { state: 'done', outcome: outcome.kind } });
      }
    }
    if (deferred.length > 0) {
      const record: DeliveryRetryScheduled = {
        type: 'DeliveryRetryScheduled',
        data: {
          messageId,
          recipients: deferred.map((d) => d.recipient),
          attempt: job.attempt,
          firstAttemptAt: plan.firstAttemptAt,
          dueAt: Math.min(...deferred.map((d) => d.nextAttemptAt)),
          acceptedEvent: job.acceptedValue.toString('base64'),
        },
        metadata: {
          eventId: eventIdFor(messageId, 'retry', job.attempt),
          organizationId,
          occurredAt: this.deps.now(),
          schemaVersion: 1,
        },
      };
      events.push(record);
    }
  }

  private failureOf(failed: Plan[]): InfrastructureError {
    const blind = failed.some(
      (plan) => plan.held.length > 0 || (plan.failure !== undefined && declaredRetriable(plan.failure) !== true),
    );
    const what = failed
      .map((plan) => {
        if (plan.held.length > 0)
          return `${plan.messageId}: unknown delivery failure for ${plan.held.join(', ')} (held)`;
        return `${plan.messageId}: ${describeCause(plan.failure)}`;
      })
      .join('; ');
    return new InfrastructureError(
      blind ? 'DeliveryNotSettled' : 'DeliveryInterrupted',
      `delivery not settled: ${what}`,
      {
        retriable: !blind,
        cause: failed[0]?.failure,
      },
    );
  }
}
