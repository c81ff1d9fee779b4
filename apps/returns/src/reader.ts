import { isInboundMail, type SuppressionEvent } from '@sendline/domain';
import {
  InfrastructureError,
  returnPathKey,
  type ConsumedEvent,
  type EventStore,
  type ReturnedMessages,
  type RunningConsumer,
  type StoredEvent,
  type SuppressionView,
} from '@sendline/infra';
import { decideReturn, messageOf, type ReadReport, type ReceivedMail, type ReturnDecision } from './match';

/** A MailReceived event as the MX appended it. */
export interface MailReceivedEvent extends StoredEvent {
  type: 'MailReceived';
  data: ReceivedMail & { raw: Buffer; envelopeFrom: string };
}

export interface ReturnsReaderOptions {
  store: EventStore;
  messages: ReturnedMessages;
  suppressions: SuppressionView;
  /** The service's secret key: the return-path tokens' key is derived from it. */
  secretKey: Buffer;
  /** Reads a raw received mail as a report (the MIME parser and the report fields: report.ts). */
  readReport: (raw: Buffer) => Promise<ReadReport>;
  groupId?: string;
  /** The service's inbound domain: mail to an inbound address there is the inbound reader's, passed over here. */
  inboundDomain?: string;
  /** The consumer's session timeout (default 30 s, the event store's). */
  sessionTimeoutMs?: number;
  /** Attempts of a report whose message is not in the activity store yet (the projector may be a moment behind). */
  maxAttempts?: number;
  log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

export interface ReturnsReport {
  recorded: number;
  nothingNew: number;
  unmatched: number;
}

/**
 * The returns reader: consumes `mail.received` (what our MX answered 250 to) and records what each mail says of
 * the message and recipient it is about (match.ts): a DSN's bounce (MessageHardBounced and the recipient's
 * suppression, as a refusal during the SMTP conversation), a spam complaint (MessageSpamComplaint and a
 * SpamComplaint suppression), an automatic reply or a delay notice. At least once: a batch's offsets are committed
 * after its events were appended (their ids are derived from what they record, so a batch read again appends the
 * same events, which every reader takes for one) and its suppressions applied to the suppression view (so the next
 * send to the address is refused at once, before the projector gets there).
 *
 * A mail that names no message or recipient of ours (no token or a forged one, a message of no organization, a
 * report that cannot be read) is recorded for the operator: it goes to `mail.received.dead-letter` with the reason,
 * and changes nothing. A report about a message the activity store does not show yet is tried again a few times
 * first (the projector may be a moment behind), then dead-lettered the same way.
 */
export class ReturnsReader {
  private readonly key: Buffer;
  readonly totals: ReturnsReport = { recorded: 0, nothingNew: 0, unmatched: 0 };

  private constructor(private readonly options: ReturnsReaderOptions) {
    this.key = returnPathKey(options.secretKey);
  }

  static async start(options: ReturnsReaderOptions): Promise<{ reader: ReturnsReader; consumer: RunningConsumer }> {
    const reader = new ReturnsReader(options);
    const consumer = await options.store.consume({
      groupId: options.groupId ?? 'returns-reader',
      topics: [options.store.topics.received],
      fromBeginning: true,
      handleBatch: (items) => reader.handle(items).then(() => undefined),
      // Appending an event again appends the same event (derived ids), and no mail is sent from here: an unknown
      // failure may be tried again.
      retryUnknownErrors: true,
      maxAttempts: options.maxAttempts ?? 8,
      initialRetryDelayMs: 500,
      maxRetryDelayMs: 5_000,
      // Every partition of mail.received (6) at once: their lookups go to ClickHouse together (ReturnedMessages
      // reads the ids asked for meanwhile in one query) and their appends to Kafka together (group commit).
      partitionsConsumedConcurrently: 6,
      ...(options.sessionTimeoutMs !== undefined && { sessionTimeoutMs: options.sessionTimeoutMs }),
      // What matched nothing is told to the operator here, once per mail tried alone (a failed batch is first taken
      // again one mail at a time); it then goes to mail.received.dead-letter with the same reason.
      onError: (error, item) => {
        if (!item) return;
        options.log?.('warn', 'returned mail not recorded', {
          receivedId: (item.event as Partial<MailReceivedEvent>).data?.receivedId,
          reason: error instanceof Error ? error.message : String(error),
        });
      },
    });
    return { reader, consumer };
  }

  /**
   * One batch: parse each mail while its messages are looked up at once (by the token in the address it came to,
   * which needs no parsing), decide, append, apply the suppressions.
   */
  async handle(items: ConsumedEvent<StoredEvent>[]): Promise<ReturnDecision[]> {
    const received = items
      .map((item) => item.event)
      .filter((event): event is MailReceivedEvent => event.type === 'MailReceived')
      .filter((event) => !this.options.inboundDomain || !isInboundMail(event.data, this.options.inboundDomain));
    const byToken = received.map((event) => messageOf(this.key, event.data, {}));
    const tokenIds = idsOf(byToken);
    const [reports, states] = await Promise.all([
      Promise.all(received.map((event) => this.options.readReport(Buffer.from(event.data.raw)))),
      this.options.messages.states(tokenIds),
    ]);
    // A mail without any token (a complaint from a feedback loop) names its message only inside: looked up now.
    const targets = received.map((event, i) => {
      const target = byToken[i]!;
      return 'unmatched' in target && target.unmatched === 'NoToken'
        ? messageOf(this.key, event.data, reports[i]!)
        : target;
    });
    const looked = new Set(tokenIds);
    const later = idsOf(targets).filter((id) => !looked.has(id));
    if (later.length > 0) for (const [id, state] of await this.options.messages.states(later)) states.set(id, state);
    const decisions = received.map((event, i): ReturnDecision => {
      const target = targets[i]!;
      if ('unmatched' in target) return { kind: 'Unmatched', reason: target.unmatched, detail: target.detail };
      return decideReturn(event.data, reports[i]!, target, states.get(target.messageId));
    });

    const recorded = decisions.flatMap((decision) => (decision.kind === 'Recorded' ? [decision] : []));
    await this.options.store.append(recorded.flatMap((decision) => decision.events));
    const suppressions: SuppressionEvent[] = recorded.flatMap((decision) => decision.suppressions);
    await this.options.suppressions.apply(suppressions);
    for (const decision of recorded) {
      this.options.log?.('info', 'return recorded', {
        messageId: decision.messageId,
        organizationId: decision.organizationId,
        recipient: decision.recipient,
        events: decision.events.map((event) => event.type),
      });
    }
    this.totals.recorded += recorded.length;
    this.totals.nothingNew += decisions.filter((decision) => decision.kind === 'NothingNew').length;

    const unmatched = decisions.flatMap((decision, i) =>
      decision.kind === 'Unmatched' ? [{ ...decision, receivedId: received[i]!.data.receivedId }] : [],
    );
    if (unmatched.length > 0) {
      // Thrown after the matched ones were recorded: the consumer hands the batch over again one mail at a time
      // (the recorded ones decide the same events again), and each unmatched one goes to the dead letters with its
      // reason — after a few attempts when its message may only be missing from the view for now.
      const notYet = unmatched.some((decision) => decision.reason === 'UnknownMessage');
      this.totals.unmatched += items.length === 1 ? unmatched.length : 0;
      throw new InfrastructureError(
        notYet ? 'ReturnNotYetMatched' : 'ReturnNotMatched',
        unmatched.map((decision) => `${decision.receivedId}: ${decision.reason}: ${decision.detail}`).join('; '),
        { retriable: notYet },
      );
    }
    return decisions;
  }
}

function idsOf(targets: ReturnType<typeof messageOf>[]): string[] {
  return targets.flatMap((target) => ('messageId' in target ? [target.messageId] : []));
}
