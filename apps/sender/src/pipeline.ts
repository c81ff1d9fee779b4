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
 * 1. Read the ledger (what earlier runs did), claiming each message for the MessageAccepted it is read from
 *    (a second copy of a message's MessageAccepted is skipped whole: one message, one delivery), and plan
 *    each message: recipients already concluded are skipped; recipients whose server already said 250 (the
 *    guard) get their Delivered from the ledger, without a send; the others are sent to.
 * 2. Compose and DKIM-sign each message that has recipients to send to.
 * 3. Append MessageSent (first attempts): the delivery is under way. Its event id is the message's
 *    (eventIdFor(messageId, 'sent')): appended again after a fault (Kafka took it, the ledger's `sent` was
 *    not written), it is the same event, and the activity store shows it once.
 * 4. Deliver: one SMTP transaction per (message, recipient domain), at most `limiter`'s many at once;
 *    each writes the guard for the recipients its server accepted as soon as its 250 arrives.
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
  /**
   * Where the MessageAccepted was read (`<topic>:<partition>:<offset>`), for a first attempt: the first copy
   * of a message read claims it in the ledger, and any other copy (a keyed send retried, appending the same
   * MessageAccepted again) is skipped whole.
   */
  source?: string;
}

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
  /** When each recipient's guard was applied (Redis's clock), this run's and earlier runs'. */
  guardedAt: Map<string, number>;
  held: string[];
  raw?: Buffer;
  results: RecipientResult[];
  failure?: unknown;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

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
      duplicates: 0,
    };
    if (jobs.length === 0) return report;
    // One job per message: a second copy of a MessageAccepted in the same run is dropped before planning (the
    // ledger's claim would skip it too; this keeps two plans from ever sharing a message).
    const seen = new Set<string>();
    const unique = jobs.filter((job) => {
      const id = job.accepted.data.messageId;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
    report.duplicates += jobs.length - unique.length;
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
        report.duplicates++;
        return [];
      }
      return [this.plan(job, ledger, report)];
    });

    // 2. Compose and sign, one message at a time, the event loop let go between two. This is the CPU-heavy
    // step (about 1-4 ms a message), and other transactions are in flight meanwhile (another partition's
    // chunk, the retry consumer): a 250 arriving now has its guard written after one message's work, not
    // after a whole chunk's (500 messages composed together held a 250 back for over 100 ms).
    const composing = plans.filter((plan) => plan.toSend.length > 0);
    const keys = composing.map((plan) =>
      this.deps.dkimKeys.keyFor(plan.organizationId, plan.job.accepted.data.from.email).then(
        (key) => ({ key }),
        (error: unknown) => ({ error }),
      ),
    );
    for (const [i, plan] of composing.entries()) {
      try {
        const found = await keys[i]!;
        if ('error' in found) throw found.error;
        plan.raw = await signMessage(await composeMessage(plan.job.accepted.data), found.key);
      } catch (error) {
        plan.failure = error;
        plan.toSend = [];
      }
      await yieldToEventLoop();
    }

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
      guardedAt: new Map(),
      held: [],
      results: [],
    };
    for (const recipient of candidates.map(canonicalAddress)) {
      const entry = ledger?.recipients.get(recipient);
      if (!entry) plan.toSend.push(recipient);
      else if (entry.state === 'accepted') {
        plan.fromGuard.push([recipient, entry]);
        plan.guardedAt.set(recipient, entry.at);
      } else if (entry.state === 'held') plan.held.push(recipient);
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
          // The guard, at once: nothing else runs between the 250 and this write (see DeliveryLedger).
          const guarded = accepted.map((result) => canonicalAddress(result.recipient));
          try {
            const at = await this.deps.ledger.markAccepted(
              plan.messageId,
              guarded,
              accepted[0]!.response,
              accepted[0]!.host,
            );
            for (const recipient of guarded) plan.guardedAt.set(recipient, at);
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
        const guardedAt = plan.guardedAt.get(recipient);
        updates.push({
          messageId,
          recipient,
          entry: { state: 'done', outcome: outcome.kind, ...(guardedAt !== undefined && { guardedAt }) },
        });
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
