import {
  addressDomain,
  allowancePeriod,
  messageDecider,
  parseAddressList,
  uniqueRecipients,
  validateSendRequest,
  type AddressListParser,
  type DomainErrorCode,
  type MessageCommand,
  type MessageEvent,
  type MessageState,
  type OutboundMessage,
  type TemplateUsed,
} from '@sendline/domain';
import {
  CommandHandler,
  nameBasedId,
  type AccountsView,
  type AllowanceCounter,
  type EventAppender,
  type OrganizationRecord,
  type SuppressionView,
} from '@sendline/infra';

/** A message the send path accepted: its id, when it was submitted, and whom it goes to. */
export interface AcceptedMessage {
  messageId: string;
  /** Epoch milliseconds (the first attempt's, for a request retried with its Idempotency-Key). */
  submittedAt: number;
  /** The addresses of To, Cc and Bcc, each list in the request's order (Cc and Bcc may be empty). */
  to: string[];
  cc: string[];
  bcc: string[];
  /** Recipients left out because they are suppressed (the message still goes to the others). */
  suppressedRecipients: string[];
  /** Sent with a test key: checked, nothing appended. */
  test: boolean;
}

/**
 * Why a message was refused: a rule of the domain (the request's validation, the message decider: `reason` is its
 * words, `suppressed` the addresses when every recipient is suppressed), or a check of the send path itself.
 */
export type SendRefusal =
  | { code: DomainErrorCode; reason: string; suppressed?: readonly string[] }
  /** From is not on a domain of the organization. */
  | { code: 'SenderSignatureNotFound'; from: string }
  /** From's domain belongs to the organization but is not verified yet. */
  | { code: 'SenderSignatureNotConfirmed'; domain: string }
  /** The organization's sending allowance is used up. */
  | { code: 'NotAllowedToSend' };

export type SendRefusalCode = SendRefusal['code'];

/** What became of one message. */
export type SendResult = { ok: true; accepted: AcceptedMessage } | { ok: false; refusal: SendRefusal };

/** Who sends: an organization, with a live key (appends, uses the allowance) or a test key (checks only). */
export interface SendingAs {
  organizationId: string;
  mode: string;
}

/** A request sent with an Idempotency-Key: what its messages' ids and time are derived from. */
export interface IdempotentRequest {
  key: string;
  /** SHA-256 of the route and the body. */
  requestHash: string;
  /** When the first request with this key arrived (a retry keeps it). */
  submittedAt: number;
}

export interface SendUseCaseOptions {
  store: EventAppender;
  accounts: Pick<AccountsView, 'domain' | 'organization'>;
  suppressions: Pick<SuppressionView, 'suppressedAmongMany'>;
  allowance: Pick<AllowanceCounter, 'used' | 'reserve'>;
  now: () => number;
  newId: () => string;
  /** The address-list parser (the API passes its cached one); default: the domain's. */
  parseAddressList?: AddressListParser;
  /** Told how many messages a live send appended (the API counts them in its metrics). */
  onAccepted?: (count: number) => void;
}

const ID_NAMESPACE = 'sendline.message';

/** One request of a send: who sends, when, and how its messages' ids are drawn. */
interface SendContext {
  sender: SendingAs;
  now: number;
  idempotency?: IdempotentRequest;
}

/** A message that passed validation, at its position in the request. */
interface Valid {
  index: number;
  message: OutboundMessage;
}

/** A valid message whose From is on a verified domain, with its recipients found among the suppressions. */
interface Checked extends Valid {
  suppressed: Set<string>;
}

/** A message the domain accepted, waiting for the allowance and the append. */
interface Decided {
  index: number;
  events: MessageEvent[];
  accepted: AcceptedMessage;
  /** Recipients it is sent to (the allowance counts them). */
  activeCount: number;
}

/** What the views know for a request: its senders' domains, its recipients among the suppressions, its allowance. */
interface ViewsRead {
  domains: Map<string, Awaited<ReturnType<AccountsView['domain']>> | undefined>;
  suppressed: Set<string>[];
  organization: OrganizationRecord | null;
}

const addresses = (mailboxes: { email: string }[]): string[] => mailboxes.map((m) => m.email);

function refused(refusal: SendRefusal): SendResult {
  return { ok: false, refusal };
}

/**
 * The send use case: request valid → From on a verified domain of the organization → recipients split against the
 * suppression view → allowance reserved for the active recipients → MessageAccepted appended (acknowledged by
 * Kafka) → what became of each message. The rules themselves are the domain's; this only wires them, and knows
 * nothing of HTTP (the API turns a result into Postmark's answer).
 */
export class SendUseCase {
  /** Nothing to apply after the append: no view of the caller reads a message back (the projector fills them). */
  private readonly messages: CommandHandler<MessageState, MessageCommand, MessageEvent>;
  private readonly parse: AddressListParser;

  constructor(private readonly deps: SendUseCaseOptions) {
    this.messages = new CommandHandler({ decider: messageDecider, store: deps.store });
    this.parse = deps.parseAddressList ?? parseAddressList;
  }

  /** Sends one message. */
  async send(sender: SendingAs, body: unknown, idempotency?: IdempotentRequest): Promise<SendResult> {
    const [result] = await this.sendMany(sender, [body], idempotency);
    if (!result) throw new Error('the send path decided nothing for the message');
    return result;
  }

  /**
   * Sends several messages: each is checked on its own; the accepted ones are appended in one batch.
   * With an Idempotency-Key, each message's id is derived from the organization, the key, the request
   * and its position, and its time is the first attempt's: a retry appends the very same MessageAccepted
   * (same MessageID, event id and time), which every consumer takes for the first.
   */
  async sendMany(
    sender: SendingAs,
    bodies: unknown[],
    idempotency?: IdempotentRequest,
    templates?: readonly (TemplateUsed | undefined)[],
  ): Promise<SendResult[]> {
    const context: SendContext = { sender, now: idempotency?.submittedAt ?? this.deps.now(), idempotency };
    const results: SendResult[] = [];
    const refuse = (index: number, refusal: SendRefusal) => (results[index] = refused(refusal));

    const valid = this.validate(bodies, refuse, templates);
    if (valid.length === 0) return results;
    const views = await this.readViews(context, valid);
    const checked = this.checkSenders(valid, views, refuse);
    const decided = this.decide(context, checked, refuse);
    if (decided.length === 0) return results;
    const allowed = await this.allowance(context, decided, views.organization, refuse);
    if (sender.mode !== 'test') await this.append(allowed);
    for (const entry of allowed) results[entry.index] = { ok: true, accepted: entry.accepted };
    return results;
  }

  /**
   * 1. Each request against the domain's rules: an invalid one is refused with the rule's code and words. A message
   *    rendered from a template (`templates`, by position) records which template and version.
   */
  private validate(
    bodies: unknown[],
    refuse: (index: number, refusal: SendRefusal) => void,
    templates?: readonly (TemplateUsed | undefined)[],
  ): Valid[] {
    const valid: Valid[] = [];
    for (const [index, body] of bodies.entries()) {
      const validation = validateSendRequest(body, this.parse);
      const template = templates?.[index];
      if (validation.ok)
        valid.push({ index, message: template ? { ...validation.message, template } : validation.message });
      else refuse(index, { code: validation.error.code, reason: validation.error.message });
    }
    return valid;
  }

  /**
   * 2. What the views know, read at once (Redis auto-pipelining sends these reads together): the senders' domains,
   *    the recipients among the suppressions, and the organization's allowance.
   */
  private async readViews(context: SendContext, valid: Valid[]): Promise<ViewsRead> {
    const org = context.sender.organizationId;
    const domainNames = [...new Set(valid.map((item) => addressDomain(item.message.from.email)))];
    const [domainStates, suppressed, organization] = await Promise.all([
      Promise.all(domainNames.map((name) => this.deps.accounts.domain(org, name))),
      this.deps.suppressions.suppressedAmongMany(
        org,
        valid.map((item) => uniqueRecipients(item.message)),
      ),
      this.deps.accounts.organization(org),
    ]);
    return { domains: new Map(domainNames.map((name, i) => [name, domainStates[i]])), suppressed, organization };
  }

  /** 3. From on a domain of the organization, and that domain verified. */
  private checkSenders(
    valid: Valid[],
    views: ViewsRead,
    refuse: (index: number, refusal: SendRefusal) => void,
  ): Checked[] {
    const checked: Checked[] = [];
    for (const [i, item] of valid.entries()) {
      const domainName = addressDomain(item.message.from.email);
      const domain = views.domains.get(domainName);
      if (!domain) refuse(item.index, { code: 'SenderSignatureNotFound', from: item.message.from.email });
      else if (!domain.verified) refuse(item.index, { code: 'SenderSignatureNotConfirmed', domain: domainName });
      else checked.push({ ...item, suppressed: views.suppressed[i] ?? new Set() });
    }
    return checked;
  }

  /** 4. The message decider accepts each message (its suppressed recipients left out) or refuses it. */
  private decide(
    context: SendContext,
    checked: Checked[],
    refuse: (index: number, refusal: SendRefusal) => void,
  ): Decided[] {
    const decided: Decided[] = [];
    for (const item of checked) {
      const { messageId, eventId } = this.idsOf(context, item.index);
      const decision = this.messages.decide({
        type: 'AcceptMessage',
        data: { messageId, message: item.message, suppressedAddresses: item.suppressed },
        metadata: { organizationId: context.sender.organizationId, now: context.now, eventIds: [eventId] },
      });
      if (!decision.ok) {
        const suppressed = decision.error.details?.suppressed as string[] | undefined;
        refuse(item.index, {
          code: decision.error.code,
          reason: decision.error.message,
          ...(suppressed ? { suppressed } : {}),
        });
        continue;
      }
      const { events } = decision;
      const acceptedEvent = events.find((event) => event.type === 'MessageAccepted');
      const data = acceptedEvent?.type === 'MessageAccepted' ? acceptedEvent.data : undefined;
      decided.push({
        index: item.index,
        events,
        accepted: {
          messageId,
          submittedAt: context.now,
          to: addresses(item.message.to),
          cc: addresses(item.message.cc),
          bcc: addresses(item.message.bcc),
          suppressedRecipients: data?.suppressedRecipients ?? [],
          test: context.sender.mode === 'test',
        },
        activeCount: data?.activeRecipients.length ?? 0,
      });
    }
    return decided;
  }

  /** A message's ids: fresh ones, or with an Idempotency-Key derived from the request and its position. */
  private idsOf(context: SendContext, index: number): { messageId: string; eventId: string } {
    const { idempotency } = context;
    if (!idempotency) return { messageId: this.deps.newId(), eventId: this.deps.newId() };
    const org = context.sender.organizationId;
    const messageId = nameBasedId(ID_NAMESPACE, org, idempotency.key, idempotency.requestHash, index);
    return { messageId, eventId: nameBasedId(ID_NAMESPACE, messageId, 'MessageAccepted') };
  }

  /**
   * 5. The allowance: the messages it has room for (the others refused NotAllowedToSend). A test key checks it and
   *    uses none of it. A live key holds room per MessageID, checked against logged + held (an unlimited
   *    organization needs none): all the messages at once, else one by one. The projector turns a hold into a count
   *    when the message's event lands; one that never lands expires.
   */
  private async allowance(
    context: SendContext,
    decided: Decided[],
    organization: OrganizationRecord | null,
    refuse: (index: number, refusal: SendRefusal) => void,
  ): Promise<Decided[]> {
    const limit = organization?.messagesPerMonth ?? null;
    if (limit === null) return decided;
    const org = context.sender.organizationId;
    const period = allowancePeriod(context.now);
    const allowed: Decided[] = [];
    if (context.sender.mode === 'test') {
      const used = await this.deps.allowance.used(org, period);
      for (const entry of decided) {
        if (used + entry.activeCount > limit) refuse(entry.index, { code: 'NotAllowedToSend' });
        else allowed.push(entry);
      }
      return allowed;
    }
    const holdsOf = (entries: Decided[]) =>
      entries.map((entry) => ({ messageId: entry.accepted.messageId, recipients: entry.activeCount }));
    if (await this.deps.allowance.reserve(org, period, holdsOf(decided), limit)) return decided;
    for (const entry of decided) {
      if (await this.deps.allowance.reserve(org, period, holdsOf([entry]), limit)) allowed.push(entry);
      else refuse(entry.index, { code: 'NotAllowedToSend' });
    }
    return allowed;
  }

  /**
   * 6. One append for every accepted message of a live send. No refund when it fails: its event may still land
   *    (acknowledged after the timeout); the hold then becomes the message's count, and otherwise it expires.
   */
  private async append(allowed: Decided[]): Promise<void> {
    if (allowed.length === 0) return;
    await this.messages.commit(allowed.flatMap((entry) => entry.events));
    this.deps.onAccepted?.(allowed.length);
  }
}
