import {
  blockingInboundRule,
  INBOUND_HOOK_ID,
  inboundMessageDecider,
  domainOfAddress,
  inboundRecipientOf,
  isInboundMail,
  webhookCallDecider,
  type InboundMessageEvent,
  type InboundRule,
  type MailReceivedData,
  type ServerSettings,
  type WebhookCallScheduled,
} from '@sendline/domain';
import {
  attemptEventIdOf,
  authenticateInboundMail,
  inboundCallIdOf,
  inboundMessageIdOf,
  inboundReceivedEventIdOf,
  CommandHandler,
  parseInboundMail,
  topicConfigs,
  type ConsumedEvent,
  type DnsResolverOptions,
  type EventStore,
  type InboundAuthentication,
  type ParsedInboundMail,
  type RunningConsumer,
  type StoredEvent,
} from '@sendline/infra';
import { inboundPayloadOf } from './payload';

/** What the reader reads of the organizations (the accounts view). */
export interface InboundDirectory {
  organizationOfInboundHash(inboundHash: string): Promise<string | null>;
  /** The organization whose VERIFIED own inbound domain this is, or null (absent: no own domains are served). */
  organizationOfInboundDomain?(domain: string): Promise<string | null>;
  serverSettings(organizationId: string): Promise<ServerSettings | null>;
  inboundRules(organizationId: string): Promise<InboundRule[]>;
}

export interface InboundReaderOptions {
  store: EventStore;
  directory: InboundDirectory;
  /** The service's inbound domain (SENDLINE_INBOUND_DOMAIN). */
  inboundDomain: string;
  /** Our name in Authentication-Results (the MX's name). */
  mta: string;
  dns?: DnsResolverOptions;
  groupId?: string;
  sessionTimeoutMs?: number;
  /** Told after each batch's messages are appended (tests, metrics). */
  onRecorded?: (events: readonly InboundMessageEvent[]) => void;
  log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
  /** The checks of a message (default: mailauth on the DNS given); a test may make them without DNS. */
  authenticate?: (raw: Uint8Array, mail: MailReceivedData) => Promise<InboundAuthentication>;
}

/**
 * The directory as one batch reads it: each question asked once (the batch's mails mostly go to a few
 * organizations), so a batch of n mails makes a few round trips to the accounts view instead of 3n (a tenth of the
 * reader's CPU per message, and Redis's). Made anew for each batch, a batch read again after a failure included: a
 * change of settings or rules counts from the next batch, as it did from the next lookup, milliseconds apart.
 */
export function askedOnceEach(directory: InboundDirectory): InboundDirectory {
  const answers = new Map<string, Promise<unknown>>();
  const once = <T>(question: string, ask: () => Promise<T>): Promise<T> => {
    let answer = answers.get(question) as Promise<T> | undefined;
    if (!answer) {
      answer = ask();
      answers.set(question, answer);
    }
    return answer;
  };
  const ofDomain = directory.organizationOfInboundDomain?.bind(directory);
  return {
    organizationOfInboundHash: (hash) => once(`hash ${hash}`, () => directory.organizationOfInboundHash(hash)),
    ...(ofDomain && { organizationOfInboundDomain: (domain) => once(`domain ${domain}`, () => ofDomain(domain)) }),
    serverSettings: (organizationId) =>
      once(`settings ${organizationId}`, () => directory.serverSettings(organizationId)),
    inboundRules: (organizationId) => once(`rules ${organizationId}`, () => directory.inboundRules(organizationId)),
  };
}

interface MailReceivedEvent extends StoredEvent {
  type: 'MailReceived';
  data: MailReceivedData;
}

/**
 * The inbound reader: consumes `mail.received` (group `inbound-reader`), passes over what came back to a return
 * path (the returns reader's), and for each inbound mail
 * 1. finds the organizations of its recipients (the inbound hash of each, the accounts view's index): one inbound
 *    message per organization, its OriginalRecipient the first of its addresses (each lookup made once per batch);
 * 2. parses the MIME once (postal-mime, never throws) while mailauth checks SPF, DKIM and DMARC;
 * 3. decides each message (RecordInboundMessage): Blocked when an inbound rule matches the sender (From or envelope
 *    sender), else Queued with a webhook call to the InboundHookUrl (ScheduleWebhookCall, recordType Inbound,
 *    webhook id INBOUND_HOOK_ID), the body the Postmark JSON;
 * 4. appends the messages (email.inbound) and then their calls (webhooks.calls) and only then returns, so the
 *    batch's offsets are committed after both are durable.
 *
 * Every id is derived from the received mail and the organization, so a batch read again after a crash appends the
 * same events and the same call (its Webhook-Id): the webhooks process posts a call answered once no more. Reading
 * the mail has no other effect, so any failure is retried.
 */
export class InboundReader {
  private readonly messages;
  private readonly calls;
  readonly totals = { recorded: 0, blocked: 0, unknownRecipient: 0 };

  private constructor(private readonly options: InboundReaderOptions) {
    this.messages = new CommandHandler({ decider: inboundMessageDecider, store: options.store });
    this.calls = new CommandHandler({ decider: webhookCallDecider, store: options.store });
  }

  static async start(options: InboundReaderOptions): Promise<{ reader: InboundReader; consumer: RunningConsumer }> {
    const reader = new InboundReader(options);
    await options.store.ensureTopics(
      topicConfigs(options.store.topics).filter((topic) => topic.topic === options.store.topics.inbound),
    );
    const consumer = await options.store.consume({
      groupId: options.groupId ?? 'inbound-reader',
      topics: [options.store.topics.received],
      fromBeginning: true,
      handleBatch: (items) => reader.handle(items),
      retryUnknownErrors: true,
      maxAttempts: 8,
      initialRetryDelayMs: 500,
      maxRetryDelayMs: 5_000,
      partitionsConsumedConcurrently: 6,
      ...(options.sessionTimeoutMs !== undefined && { sessionTimeoutMs: options.sessionTimeoutMs }),
      onError: (error, item) => {
        options.log?.('warn', 'inbound mail not recorded yet', {
          receivedId: (item?.event as Partial<MailReceivedEvent> | undefined)?.data?.receivedId,
          reason: error instanceof Error ? error.message : String(error),
        });
      },
    });
    return { reader, consumer };
  }

  async handle(items: ConsumedEvent<StoredEvent>[]): Promise<void> {
    const received = items
      .map((item) => item.event)
      .filter((event): event is MailReceivedEvent => event?.type === 'MailReceived')
      .filter((event) => isInboundMail(event.data, this.options.inboundDomain));
    if (received.length === 0) return;
    const directory = askedOnceEach(this.options.directory);
    const decided = await Promise.all(received.map((event) => this.decide(event, directory)));
    const messages = decided.flatMap((d) => d.messages);
    const calls = decided.flatMap((d) => d.calls);
    await this.messages.commit(messages);
    await this.calls.commit(calls);
    this.options.onRecorded?.(messages);
  }

  private async decide(
    event: MailReceivedEvent,
    directory: InboundDirectory,
  ): Promise<{ messages: InboundMessageEvent[]; calls: WebhookCallScheduled[] }> {
    const mail = event.data;
    const { inboundDomain } = this.options;
    // The organizations it is for, each with the first of its addresses among the recipients.
    const recipients = new Map<string, string>();
    for (const address of mail.envelopeTo) {
      const recipient = inboundRecipientOf(address, inboundDomain);
      const organizationId = recipient
        ? await directory.organizationOfInboundHash(recipient.inboundHash)
        : ((await directory.organizationOfInboundDomain?.(domainOfAddress(address))) ?? null);
      if (!organizationId) {
        this.totals.unknownRecipient++;
        this.options.log?.('warn', 'inbound mail for an address of no organization', {
          receivedId: mail.receivedId,
          recipient: address,
        });
        continue;
      }
      if (!recipients.has(organizationId)) recipients.set(organizationId, address);
    }
    if (recipients.size === 0) return { messages: [], calls: [] };

    const raw = mail.raw;
    const [parsed, authentication] = await Promise.all([parseInboundMail(raw), this.authenticate(raw, mail)]);
    const out = { messages: [] as InboundMessageEvent[], calls: [] as WebhookCallScheduled[] };
    for (const [organizationId, originalRecipient] of recipients) {
      const [settings, rules] = await Promise.all([
        directory.serverSettings(organizationId),
        directory.inboundRules(organizationId),
      ]);
      const decided = this.decideOne(mail, parsed, authentication, organizationId, originalRecipient, settings, rules);
      out.messages.push(...decided.messages);
      out.calls.push(...decided.calls);
    }
    return out;
  }

  private authenticate(raw: Uint8Array, mail: MailReceivedData): Promise<InboundAuthentication> {
    if (this.options.authenticate) return this.options.authenticate(raw, mail);
    const { mta, dns } = this.options;
    return authenticateInboundMail(raw, mail, { mta, ...(dns && { dns }) });
  }

  private decideOne(
    mail: MailReceivedData,
    parsed: ParsedInboundMail,
    authentication: InboundAuthentication,
    organizationId: string,
    originalRecipient: string,
    settings: ServerSettings | null,
    rules: InboundRule[],
  ): { messages: InboundMessageEvent[]; calls: WebhookCallScheduled[] } {
    const messageId = inboundMessageIdOf(mail.receivedId, organizationId);
    const eventId = inboundReceivedEventIdOf(messageId);
    const payload = inboundPayloadOf({
      messageId,
      mail: parsed,
      authentication,
      raw: mail.raw,
      envelopeFrom: mail.envelopeFrom,
      originalRecipient,
      inboundDomain: this.options.inboundDomain,
      ...(settings?.inboundDomain &&
        settings.inboundDomainVerifiedAt !== undefined && { ownDomain: settings.inboundDomain }),
      rawEmailEnabled: settings?.rawEmailEnabled ?? false,
    });
    const rule =
      blockingInboundRule(rules, payload.From) ??
      (mail.envelopeFrom ? blockingInboundRule(rules, mail.envelopeFrom) : undefined);
    const body = JSON.stringify(payload);
    const decision = this.messages.decide({
      type: 'RecordInboundMessage',
      data: {
        messageId,
        receivedId: mail.receivedId,
        status: rule ? 'Blocked' : 'Queued',
        blockedReason: rule ? `blocked by the inbound rule ${rule.ruleId} (${rule.rule})` : '',
        from: payload.From,
        fromName: payload.FromName,
        to: payload.To,
        cc: payload.Cc,
        subject: payload.Subject,
        mailboxHash: payload.MailboxHash,
        tag: payload.Tag,
        originalRecipient,
        receivedAt: mail.receivedAt,
        sizeBytes: mail.raw.byteLength,
        payload: body,
      },
      metadata: { organizationId, now: mail.receivedAt, eventIds: [eventId] },
    });
    if (!decision.ok) throw decision.error;
    if (rule) {
      this.totals.blocked++;
      return { messages: decision.events, calls: [] };
    }
    this.totals.recorded++;
    const callId = inboundCallIdOf(messageId, false);
    const call = this.calls.decide({
      type: 'ScheduleWebhookCall',
      data: { callId, webhookId: INBOUND_HOOK_ID, recordType: 'Inbound', sourceEventId: eventId, body },
      metadata: { organizationId, now: mail.receivedAt, eventIds: [attemptEventIdOf(callId, 1)] },
    });
    if (!call.ok) throw call.error;
    return { messages: decision.events, calls: call.events };
  }
}
