import {
  addressDomain,
  allowancePeriod,
  messageDecider,
  parseAddressList,
  uniqueRecipients,
  validateSendRequest,
  type AddressListParser,
  type MessageCommand,
  type MessageEvent,
  type MessageState,
  type OutboundMessage,
} from '@sendline/domain';
import {
  CommandHandler,
  nameBasedId,
  type AccountsView,
  type AllowanceCounter,
  type EventAppender,
  type SuppressionView,
} from '@sendline/infra';

/**
 * Postmark's send result for an accepted message (the 200 answer of POST /email, an entry of POST /email/batch).
 * The API's TypeBox schema of the same name describes it on the wire.
 */
export interface AcceptedSend {
  To: string;
  Cc?: string;
  Bcc?: string;
  SubmittedAt: string;
  MessageID: string;
  ErrorCode: 0;
  Message: string;
}

/**
 * What became of one message: accepted, or refused with a code of the error catalogue (a DomainErrorCode or
 * 'SenderSignatureNotFound' / 'SenderSignatureNotConfirmed' / 'NotAllowedToSend') and the parameters of its message.
 */
export type SendDecision =
  | { ok: true; result: AcceptedSend }
  | { ok: false; code: string; params: Record<string, string | string[] | undefined> };

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

export interface SendingServiceOptions {
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

/** A message that passed every check and waits for its events to be appended. */
interface Decided {
  /** The message's position in the request. */
  index: number;
  messageId: string;
  events: MessageEvent[];
  result: AcceptedSend;
  activeCount: number;
}

function formatList(mailboxes: { email: string; name?: string }[]): string {
  return mailboxes.map((m) => m.email).join(', ');
}

function refused(code: string, params: Record<string, string | string[] | undefined> = {}): SendDecision {
  return { ok: false, code, params };
}

/**
 * The send path: request valid → From on a verified domain of the organization → recipients split against the
 * suppression view → allowance reserved for the active recipients → MessageAccepted appended (acknowledged by
 * Kafka) → the result. The rules themselves are the domain's; this only wires them.
 */
export class SendingService {
  /** Nothing to apply after the append: no view of the caller reads a message back (the projector fills them). */
  private readonly messages: CommandHandler<MessageState, MessageCommand, MessageEvent>;
  private readonly parse: AddressListParser;

  constructor(private readonly deps: SendingServiceOptions) {
    this.messages = new CommandHandler({ decider: messageDecider, store: deps.store });
    this.parse = deps.parseAddressList ?? parseAddressList;
  }

  /** Sends one message. */
  async send(sender: SendingAs, body: unknown, idempotency?: IdempotentRequest): Promise<SendDecision> {
    const [outcome] = await this.sendMany(sender, [body], idempotency);
    if (!outcome) throw new Error('the send path decided nothing for the message');
    return outcome;
  }

  /**
   * Sends several messages: each is checked on its own; the accepted ones are appended in one batch.
   * With an Idempotency-Key, each message's id is derived from the organization, the key, the request
   * and its position, and its time is the first attempt's: a retry appends the very same MessageAccepted
   * (same MessageID, event id and time), which every consumer takes for the first.
   */
  async sendMany(sender: SendingAs, bodies: unknown[], idempotency?: IdempotentRequest): Promise<SendDecision[]> {
    const org = sender.organizationId;
    const now = idempotency?.submittedAt ?? this.deps.now();
    const idsOf = (index: number): { messageId: string; eventId: string } => {
      if (!idempotency) return { messageId: this.deps.newId(), eventId: this.deps.newId() };
      const messageId = nameBasedId(ID_NAMESPACE, org, idempotency.key, idempotency.requestHash, index);
      return { messageId, eventId: nameBasedId(ID_NAMESPACE, messageId, 'MessageAccepted') };
    };
    const outcomes: SendDecision[] = [];
    const decided: Decided[] = [];

    // 1. Validation.
    const valid: { index: number; message: OutboundMessage }[] = [];
    for (const [index, body] of bodies.entries()) {
      const validation = validateSendRequest(body, this.parse);
      if (!validation.ok) {
        outcomes[index] = refused(validation.error.code, { detail: validation.error.message });
        continue;
      }
      valid.push({ index, message: validation.message });
    }

    // 2. What the views know, read at once (Redis auto-pipelining sends these reads together): the senders'
    //    domains, the recipients among the suppressions, and the organization's allowance.
    const domainNames = [...new Set(valid.map((item) => addressDomain(item.message.from.email)))];
    const [domainStates, suppressedOfValid, organization] =
      valid.length === 0
        ? [[], [], null]
        : await Promise.all([
            Promise.all(domainNames.map((name) => this.deps.accounts.domain(org, name))),
            this.deps.suppressions.suppressedAmongMany(
              org,
              valid.map((item) => uniqueRecipients(item.message)),
            ),
            this.deps.accounts.organization(org),
          ]);
    const domains = new Map(domainNames.map((name, i) => [name, domainStates[i]]));
    const checked: ((typeof valid)[number] & { suppressed: Set<string> })[] = [];
    for (const [i, item] of valid.entries()) {
      const domainName = addressDomain(item.message.from.email);
      const domain = domains.get(domainName);
      if (!domain) outcomes[item.index] = refused('SenderSignatureNotFound', { from: item.message.from.email });
      else if (!domain.verified) outcomes[item.index] = refused('SenderSignatureNotConfirmed', { domain: domainName });
      else checked.push({ ...item, suppressed: suppressedOfValid[i] ?? new Set() });
    }

    // 3. The domain decides.
    for (const item of checked) {
      const { messageId, eventId } = idsOf(item.index);
      const decision = this.messages.decide({
        type: 'AcceptMessage',
        data: { messageId, message: item.message, suppressedAddresses: item.suppressed },
        metadata: { organizationId: org, now, eventIds: [eventId] },
      });
      if (!decision.ok) {
        const addresses = (decision.error.details?.suppressed as string[] | undefined) ?? [];
        outcomes[item.index] = refused(decision.error.code, { addresses, detail: decision.error.message });
        continue;
      }
      const { events } = decision;
      const accepted = events.find((event) => event.type === 'MessageAccepted');
      const data = accepted?.type === 'MessageAccepted' ? accepted.data : undefined;
      const suppressedHere = data?.suppressedRecipients ?? [];
      const result: AcceptedSend = {
        To: formatList(item.message.to),
        ...(item.message.cc.length ? { Cc: formatList(item.message.cc) } : {}),
        ...(item.message.bcc.length ? { Bcc: formatList(item.message.bcc) } : {}),
        SubmittedAt: new Date(now).toISOString(),
        MessageID: messageId,
        ErrorCode: 0,
        Message:
          sender.mode === 'test'
            ? 'Test job accepted'
            : suppressedHere.length
              ? `OK. Not sent to suppressed recipients: ${suppressedHere.join(', ')}.`
              : 'OK',
      };
      decided.push({ index: item.index, messageId, events, result, activeCount: data?.activeRecipients.length ?? 0 });
    }

    // 4. Allowance, then the append.
    if (decided.length > 0) {
      const limit = organization?.messagesPerMonth ?? null;
      const period = allowancePeriod(now);
      const toAppend: Decided[] = [];
      if (sender.mode === 'test') {
        // A test key checks the allowance and uses none of it.
        const used = limit === null ? 0 : await this.deps.allowance.used(org, period);
        for (const entry of decided) {
          if (limit !== null && used + entry.activeCount > limit) outcomes[entry.index] = refused('NotAllowedToSend');
          else outcomes[entry.index] = { ok: true, result: entry.result };
        }
      } else {
        // A hold per MessageID, checked against logged + held (an unlimited organization needs none). The
        // projector turns a hold into a count when the message's event lands; one that never lands expires.
        const holdsOf = (entries: Decided[]) =>
          entries.map((entry) => ({ messageId: entry.messageId, recipients: entry.activeCount }));
        if (limit === null || (await this.deps.allowance.reserve(org, period, holdsOf(decided), limit))) {
          toAppend.push(...decided);
        } else {
          for (const entry of decided) {
            if (await this.deps.allowance.reserve(org, period, holdsOf([entry]), limit)) toAppend.push(entry);
            else outcomes[entry.index] = refused('NotAllowedToSend');
          }
        }
        if (toAppend.length > 0) {
          // No refund when the append fails: its event may still land (acknowledged after the timeout); the hold
          // then becomes the message's count, and otherwise it expires.
          await this.messages.commit(toAppend.flatMap((entry) => entry.events));
          this.deps.onAccepted?.(toAppend.length);
          for (const entry of toAppend) outcomes[entry.index] = { ok: true, result: entry.result };
        }
      }
    }
    return outcomes;
  }
}
