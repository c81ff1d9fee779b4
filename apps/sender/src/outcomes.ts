import {
  canonicalAddress,
  classifyDeliveryAttempt,
  deliveryOutcomeOf,
  eventMetadata,
  evolveMessage,
  suppressionForHardBounce,
  type DeliveryClassification,
  type DeliveryOutcome,
  type RetryPolicy,
  type SuppressionEvent,
} from '@sendline/domain';
import { describeCause } from '@sendline/infra';
import { decided, isMessageEvent, type SenderCommands, type SenderEvent } from './commands';
import type { Delivery } from './deliver';
import { eventIdFor } from './ids';
import type { LedgerUpdate } from './ledger';
import type { Plan } from './plan';
import type { DeliveryRetryScheduled } from './retryRecord';

/** What one message's attempt concluded, to append, record in the ledger and apply (see pipeline.ts). */
export interface Outcomes {
  /** Each recipient's outcome (a hard bounce's SuppressionAdded right after it), then the retry record, if any. */
  events: SenderEvent[];
  /** The SuppressionAdded among `events`, for the suppression view. */
  suppressions: SuppressionEvent[];
  /** The ledger's record of each recipient concluded, deferred or held. */
  ledger: LedgerUpdate[];
  /** Recipients whose delivery failed in an unknown way in this attempt: held, never sent again on their own. */
  held: string[];
  /** Each recipient's outcome, as decided (an outcome recorded already is counted, not appended again). */
  kinds: DeliveryOutcome['kind'][];
}

export interface OutcomeContext {
  commands: SenderCommands;
  retryPolicy: RetryPolicy;
  now: () => number;
}

/** What a server answered a recipient, classified. */
interface Observed {
  recipient: string;
  classification: DeliveryClassification;
  server: string;
  /** When the server answered, if in this run (else the outcome is dated now: a guard's Delivered, recorded late). */
  answeredAt?: number;
  /** The envelope sender the recipient was sent with, recorded on its outcome. */
  returnPath?: string;
}

/** The reply code at the start of a server's answer ("250 2.0.0 OK" → 250); 250 when it has none. */
function replyCode(response: string): number {
  const match = /^(\d{3})/.exec(response.trim());
  return match ? Number(match[1]) : 250;
}

function accepted(response: string): DeliveryClassification {
  return classifyDeliveryAttempt({ kind: 'response', code: replyCode(response), text: response });
}

/**
 * Step 5 of a delivery attempt: each recipient's outcome, decided by the domain (classifyDeliveryAttempt,
 * deliveryOutcomeOf, the message decider) on the plan's state: the recipients the guard already knew accepted,
 * then what this attempt's transactions brought back. A hard bounce adds its suppression; the deferred
 * recipients get one retry record (DeliveryRetryScheduled) carrying what their next attempt needs.
 */
export function decideOutcomes(plan: Plan, delivery: Delivery, context: OutcomeContext): Outcomes {
  const { messageId, organizationId, job } = plan;
  const outcomes: Outcomes = { events: [], suppressions: [], ledger: [], held: [], kinds: [] };
  const observed: Observed[] = plan.fromGuard.map(({ recipient, response, host, returnPath }) => ({
    recipient,
    classification: accepted(response),
    server: host,
    returnPath,
  }));
  for (const result of delivery.results) {
    const recipient = canonicalAddress(result.recipient);
    const answeredAt = delivery.answeredAt.get(recipient);
    const returnPath = delivery.returnPaths.get(recipient);
    if (result.accepted) {
      observed.push({
        recipient,
        classification: accepted(result.response),
        server: result.host,
        answeredAt,
        returnPath,
      });
      continue;
    }
    const attempt = result.error.attempt;
    if (!attempt) {
      outcomes.held.push(recipient);
      outcomes.ledger.push({ messageId, recipient, entry: { state: 'held', error: describeCause(result.error) } });
      continue;
    }
    observed.push({
      recipient,
      classification: classifyDeliveryAttempt(attempt),
      server: result.error.host ?? '',
      answeredAt,
      returnPath,
    });
  }

  let state = plan.state;
  const deferred: { recipient: string; nextAttemptAt: number }[] = [];
  for (const { recipient, classification, server, answeredAt, returnPath } of observed) {
    const now = answeredAt ?? context.now();
    const outcome = deliveryOutcomeOf(classification, {
      attempt: job.attempt,
      firstAttemptAt: plan.firstAttemptAt,
      now,
      random: plan.random,
      destinationServer: server,
      policy: context.retryPolicy,
    });
    const events = decided(
      context.commands.messages.decide(
        {
          type: 'RecordDeliveryOutcome',
          data: { messageId, recipient, outcome, ...(returnPath !== undefined && { returnPath }) },
          metadata: { organizationId, now, eventIds: [eventIdFor(messageId, recipient, outcome.kind, job.attempt)] },
        },
        state,
      ),
    );
    for (const event of events.filter(isMessageEvent)) {
      state = evolveMessage(state, event);
      outcomes.events.push(event);
      if (event.type === 'MessageHardBounced') {
        const added = decided(
          context.commands.suppressions.decide({
            type: 'AddSuppression',
            data: suppressionForHardBounce(event),
            metadata: { organizationId, now, eventIds: [eventIdFor(messageId, recipient, 'SuppressionAdded')] },
          }),
        );
        outcomes.suppressions.push(...added);
        outcomes.events.push(...added);
      }
    }
    outcomes.kinds.push(outcome.kind);
    if (outcome.kind === 'Deferred') {
      deferred.push({ recipient, nextAttemptAt: outcome.nextAttemptAt });
      outcomes.ledger.push({ messageId, recipient, entry: { state: 'deferred', attempt: outcome.attempt } });
    } else {
      const guardedAt = delivery.guardedAt.get(recipient);
      outcomes.ledger.push({
        messageId,
        recipient,
        entry: { state: 'done', outcome: outcome.kind, ...(guardedAt !== undefined && { guardedAt }) },
      });
    }
  }
  if (deferred.length > 0) outcomes.events.push(retryRecord(plan, deferred, context.now()));
  return outcomes;
}

/** The retry record of an attempt's deferred recipients: due when the earliest of them is. */
function retryRecord(
  plan: Plan,
  deferred: readonly { recipient: string; nextAttemptAt: number }[],
  now: number,
): DeliveryRetryScheduled {
  const { messageId, organizationId, job } = plan;
  return {
    type: 'DeliveryRetryScheduled',
    data: {
      messageId,
      recipients: deferred.map((d) => d.recipient),
      attempt: job.attempt,
      firstAttemptAt: plan.firstAttemptAt,
      dueAt: Math.min(...deferred.map((d) => d.nextAttemptAt)),
      acceptedEvent: job.acceptedValue.toString('base64'),
    },
    metadata: eventMetadata({ organizationId, now, eventIds: [eventIdFor(messageId, 'retry', job.attempt)] })(),
  };
}
