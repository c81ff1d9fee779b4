import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  decideMessage,
  decideOrganization,
  foldOrganization,
  suppressionDecider,
  suppressionForHardBounce,
  suppressionForSpamComplaint,
  type ReturnedOutcome,
  formatApiKey,
  keyPrefixForDisplay,
  type AccountCommand,
  type AccountEvent,
  evolveMessage,
  initialMessageState,
  messageListingStatus,
  type MessageAccepted,
  type MessageEvent,
  type MessageListingStatus,
  type SuppressionEvent,
} from '@sendline/domain';
import { createClickHouse, migrate, type ClickHouseClient } from '@sendline/infra';
import { addresses } from '../support/services';

const meta = (organizationId: string, occurredAt: number) => ({
  eventId: randomUUID(),
  organizationId,
  occurredAt,
  schemaVersion: 1,
});

export interface AcceptedOptions {
  messageId?: string;
  at?: number;
  to?: string[];
  cc?: string[];
  bcc?: string[];
  suppressed?: string[];
  from?: string;
  fromName?: string;
  subject?: string;
  tag?: string;
  textBody?: string;
  metadata?: Record<string, string>;
}

/** A MessageAccepted as the message decider writes it. */
export function accepted(organizationId: string, options: AcceptedOptions = {}): MessageAccepted {
  const at = options.at ?? Date.now();
  const to = options.to ?? ['Ann@Example.net'];
  const cc = options.cc ?? [];
  const bcc = options.bcc ?? [];
  const suppressed = (options.suppressed ?? []).map((a) => a.toLowerCase());
  const all = [...new Set([...to, ...cc, ...bcc].map((a) => a.toLowerCase()))];
  return {
    type: 'MessageAccepted',
    data: {
      messageId: options.messageId ?? randomUUID(),
      from: { email: options.from ?? 'sender@example.test', name: options.fromName ?? 'Sender' },
      to: to.map((email) => ({ email, name: '' })),
      cc: cc.map((email) => ({ email })),
      bcc: bcc.map((email) => ({ email })),
      replyTo: [],
      subject: options.subject ?? 'Your receipt',
      tag: options.tag ?? 'receipts',
      textBody: options.textBody ?? 'Thanks for your order.',
      htmlBody: '<p>Thanks for your order.</p>',
      headers: [{ name: 'X-Order', value: '42' }],
      metadata: options.metadata ?? { order: '42' },
      attachments: [],
      trackOpens: false,
      trackLinks: 'None',
      messageStream: 'outbound',
      sizeBytes: 100,
      activeRecipients: all.filter((a) => !suppressed.includes(a)),
      suppressedRecipients: all.filter((a) => suppressed.includes(a)),
      submittedAt: at,
    },
    metadata: meta(organizationId, at),
  };
}

type Of<T extends MessageEvent['type']> = Extract<MessageEvent, { type: T }>;

export function sent(message: MessageAccepted, at = message.data.submittedAt + 100): Of<'MessageSent'> {
  return {
    type: 'MessageSent',
    data: { messageId: message.data.messageId },
    metadata: meta(message.metadata.organizationId, at),
  };
}

export function delivered(
  message: MessageAccepted,
  recipient: string,
  at = message.data.submittedAt + 1000,
): Of<'MessageDelivered'> {
  return {
    type: 'MessageDelivered',
    data: {
      messageId: message.data.messageId,
      recipient,
      smtpResponse: '250 2.0.0 OK queued as 1234',
      destinationServer: 'mx.example.net',
    },
    metadata: meta(message.metadata.organizationId, at),
  };
}

export function deferred(
  message: MessageAccepted,
  recipient: string,
  attempt = 1,
  at = message.data.submittedAt + 500,
): Of<'MessageDeferred'> {
  return {
    type: 'MessageDeferred',
    data: {
      messageId: message.data.messageId,
      recipient,
      reason: 'response',
      smtpResponse: '451 4.2.0 Try again later',
      summary: 'Mailbox temporarily unavailable',
      attempt,
      nextAttemptAt: at + 60_000,
    },
    metadata: meta(message.metadata.organizationId, at),
  };
}

export function hardBounced(
  message: MessageAccepted,
  recipient: string,
  at = message.data.submittedAt + 1000,
): Of<'MessageHardBounced'> {
  return {
    type: 'MessageHardBounced',
    data: {
      messageId: message.data.messageId,
      recipient,
      smtpResponse: '550 5.1.1 <x>: user unknown',
      statusCode: 550,
      enhancedStatus: '5.1.1',
      summary: 'Bad destination mailbox address',
    },
    metadata: meta(message.metadata.organizationId, at),
  };
}

export function softBounced(
  message: MessageAccepted,
  recipient: string,
  at = message.data.submittedAt + 1000,
): Of<'MessageSoftBounced'> {
  return {
    type: 'MessageSoftBounced',
    data: {
      messageId: message.data.messageId,
      recipient,
      reason: 'PermanentFailure',
      smtpResponse: '552 5.2.2 Mailbox full',
      summary: 'Mailbox full',
      attempts: 1,
    },
    metadata: meta(message.metadata.organizationId, at),
  };
}

export function policyRejected(
  message: MessageAccepted,
  recipient: string,
  at = message.data.submittedAt + 1000,
): Of<'MessagePolicyRejected'> {
  return {
    type: 'MessagePolicyRejected',
    data: {
      messageId: message.data.messageId,
      recipient,
      smtpResponse: '550 5.7.1 Message rejected as spam',
      statusCode: 550,
      enhancedStatus: '5.7.1',
      summary: 'Rejected by policy',
    },
    metadata: meta(message.metadata.organizationId, at),
  };
}

export function suppressionAdded(organizationId: string, emailAddress: string, at = Date.now()): SuppressionEvent {
  return {
    type: 'SuppressionAdded',
    data: { emailAddress: emailAddress.toLowerCase(), reason: 'ManualSuppression', origin: 'Customer', createdAt: at },
    metadata: meta(organizationId, at),
  };
}

export function suppressionDeleted(organizationId: string, emailAddress: string, at = Date.now()): SuppressionEvent {
  return {
    type: 'SuppressionDeleted',
    data: { emailAddress: emailAddress.toLowerCase() },
    metadata: meta(organizationId, at),
  };
}

/**
 * What mail that came back about `recipient` decides (the message decider's RecordReturn, on the state the
 * message's events so far leave), at `at`: the events the returned-mail reader appends.
 */
export function returned(
  events: MessageEvent[],
  recipient: string,
  outcome: ReturnedOutcome,
  at: number,
  reportId = `report-${randomUUID()}`,
): MessageEvent[] {
  const message = events[0] as MessageAccepted;
  return decideMessage(
    {
      type: 'RecordReturn',
      data: { messageId: message.data.messageId, recipient, reportId, outcome },
      metadata: { organizationId: message.metadata.organizationId, now: at, eventIds: [randomUUID()] },
    },
    events.reduce(evolveMessage, initialMessageState()),
  );
}

/** A DSN's hard bounce (5.1.1), a spam complaint (abuse), an automatic reply and a DSN's delay notice. */
export const RETURNED = {
  hardBounce: {
    kind: 'HardBounced',
    smtpResponse: 'smtp; 550 5.1.1 <x>: mailbox unavailable',
    statusCode: 550,
    enhancedStatus: '5.1.1',
    summary: 'Bad destination mailbox address',
  },
  complaint: {
    kind: 'SpamComplaint',
    feedbackType: 'abuse',
    userAgent: 'ExampleFBL/1.0',
    summary: 'Reported as spam by the recipient',
  },
  autoReply: { kind: 'AutoReplied', summary: 'Out of office until Monday' },
  delay: {
    kind: 'DelayReported',
    smtpResponse: 'smtp; 451 4.4.7 Delivery delayed',
    enhancedStatus: '4.4.7',
    summary: 'Delivery delayed',
  },
} as const satisfies Record<string, ReturnedOutcome>;

/**
 * The suppression a returned event adds, as the suppression decider decides it (a hard bounce's, a complaint's):
 * what the returned-mail reader appends right after the message's event. [] for any other event.
 */
export function suppressionAfter(event: MessageEvent, at = event.metadata.occurredAt): SuppressionEvent[] {
  const data =
    event.type === 'MessageHardBounced'
      ? suppressionForHardBounce(event)
      : event.type === 'MessageSpamComplaint'
        ? suppressionForSpamComplaint(event)
        : undefined;
  if (!data) return [];
  return suppressionDecider.decide(
    {
      type: 'AddSuppression',
      data,
      metadata: { organizationId: event.metadata.organizationId, now: at, eventIds: [randomUUID()] },
    },
    suppressionDecider.initialState(),
  );
}

/**
 * A message delivered, then mail came back about it, picked by `n`: a DSN's hard bounce, a spam complaint, an
 * automatic reply, a DSN's delay notice (before the delivery).
 */
export function cameBack(organizationId: string, n: number, at = Date.now() - 3600_000): MessageEvent[] {
  const r = `back${n}@example.net`;
  const m = accepted(organizationId, { at: at + n, to: [r], subject: `Came back ${n}` });
  const base: MessageEvent[] = [m, sent(m)];
  const later = m.data.submittedAt + 60_000;
  switch (n % 4) {
    case 0: {
      const done = [...base, delivered(m, r)];
      return [...done, ...returned(done, r, RETURNED.hardBounce, later)];
    }
    case 1: {
      const done = [...base, delivered(m, r)];
      return [...done, ...returned(done, r, RETURNED.complaint, later)];
    }
    case 2: {
      const done = [...base, delivered(m, r)];
      return [...done, ...returned(done, r, RETURNED.autoReply, later)];
    }
    default: {
      const notice = returned(base, r, RETURNED.delay, m.data.submittedAt + 500);
      return [...base, ...notice, delivered(m, r, later)];
    }
  }
}

/** What the domain says a message's listing status is after these events (its own evolve and derive). */
export function expectedStatus(events: MessageEvent[]): MessageListingStatus | undefined {
  return messageListingStatus(events.reduce(evolveMessage, initialMessageState()));
}

/** A fresh activity database (all migrations applied); `drop()` removes it. */
export async function freshActivityDatabase(prefix = 'test_activity'): Promise<{
  client: ClickHouseClient;
  database: string;
  drop(): Promise<void>;
}> {
  const client = createClickHouse(addresses.clickhouseUrl);
  const database = `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  await migrate(client, database);
  return {
    client,
    database,
    drop: async () => {
      await client.command({ query: `DROP DATABASE IF EXISTS ${database}` });
      await client.close();
    },
  };
}

/** An organization's account events as the console decides them: created, a member, a key issued and revoked, an allowance. */
export function accountEvents(organizationId: string, at = Date.now()): AccountEvent[] {
  const events: AccountEvent[] = [];
  let step = 0;
  const run = (command: Omit<AccountCommand, 'metadata'>) => {
    const decided = decideOrganization(
      {
        ...command,
        metadata: { organizationId, now: at + step++, eventIds: [randomUUID(), randomUUID()] },
      } as AccountCommand,
      foldOrganization(events),
    );
    events.push(...decided);
  };
  const token = formatApiKey('live', randomBytes(24).toString('base64url'));
  const keyId = randomUUID();
  run({
    type: 'CreateOrganization',
    data: { name: `Org ${organizationId.slice(0, 8)}`, adminEmail: 'admin@example.test' },
  });
  run({ type: 'AddMember', data: { email: 'dev@example.test', role: 'developer' } });
  run({
    type: 'IssueApiKey',
    data: {
      keyId,
      name: 'live key',
      scopes: ['email:send', 'email:read'],
      mode: 'live',
      keyHash: createHash('sha256').update(token).digest('hex'),
      keyPrefix: keyPrefixForDisplay(token),
    },
  });
  run({ type: 'RevokeApiKey', data: { keyId } });
  run({ type: 'SetAllowance', data: { messagesPerMonth: 1000 } });
  return events;
}

/**
 * An organization's inbound settings and rules after `before` (its account events): its first ServerSettingsChanged
 * (with a hook URL and RawEmailEnabled), two inbound rules, one deleted again. Four events.
 */
export function inboundAccountEvents(organizationId: string, before: AccountEvent[], at = Date.now()): AccountEvent[] {
  const events = [...before];
  let step = 0;
  const run = (command: Omit<AccountCommand, 'metadata'>) => {
    const decided = decideOrganization(
      { ...command, metadata: { organizationId, now: at + step++, eventIds: [randomUUID()] } } as AccountCommand,
      foldOrganization(events),
    );
    events.push(...decided);
  };
  run({
    type: 'ChangeServerSettings',
    data: {
      inboundHash: createHash('sha256').update(organizationId).digest('hex').slice(0, 32),
      signingSecretSealed: 'v1.aXY.dGFn.aW5ib3VuZA',
      inboundHookUrl: 'https://hooks.example.test/inbound',
      rawEmailEnabled: true,
      allowHttp: false,
    },
  });
  run({ type: 'CreateInboundRule', data: { ruleId: 11, rule: 'spam.example.net' } });
  run({ type: 'CreateInboundRule', data: { ruleId: 12, rule: 'bad@example.net' } });
  run({ type: 'DeleteInboundRule', data: { ruleId: 11 } });
  return events.slice(before.length);
}

/** A message with a lifecycle picked by `n`: delivered, bounced, deferred then delivered, rejected, or still queued. */
export function lifecycle(organizationId: string, n: number, at = Date.now() - 3600_000): MessageEvent[] {
  const m = accepted(organizationId, {
    at: at + n,
    to: [`r${n}@example.net`],
    tag: `tag${n % 3}`,
    subject: `Message ${n}`,
  });
  const r = `r${n}@example.net`;
  switch (n % 5) {
    case 0:
      return [m, sent(m), delivered(m, r)];
    case 1:
      return [m, sent(m), hardBounced(m, r)];
    case 2:
      return [m, sent(m), deferred(m, r), delivered(m, r, m.data.submittedAt + 2000)];
    case 3:
      return [m, sent(m), policyRejected(m, r)];
    default:
      return [m];
  }
}
