import { eventMetadata, type Decider } from '../decider';
import { assertNever, type Command, type DomainEvent } from '../event';

/**
 * Mail that came back: one message our receiving server (apps/mx) took for a return-path address (a bounce, a
 * complaint; later, inbound mail), recorded before the server answers 250, as it arrived. One stream per received
 * message (its receivedId); nothing is decided about it here: reading what it says (whose message it is about, a
 * bounce or a complaint) is the readers' job, after the fact.
 *
 *   (none) ──RecordMailReceived──► Received
 */

/**
 * The organization of a MailReceived: none (the empty string). Who the mail is about is known only once a reader
 * has checked the return-path token it was sent to (the token names a message, the message its organization); the
 * receiving server does not look that up before answering, and a forged token names nobody.
 */
export const NO_ORGANIZATION = '';

export interface MailReceivedData {
  /** This server's id of the message (UUID), given to the remote server in the 250 answer. */
  receivedId: string;
  /** The envelope sender, `MAIL FROM` (the empty string for the null reverse path `<>` of a DSN). */
  envelopeFrom: string;
  /** The envelope recipients, `RCPT TO` accepted, in order, as written. */
  envelopeTo: string[];
  /** The address the remote server connected from. */
  remoteAddress: string;
  /** The name it gave in EHLO or HELO. */
  heloName: string;
  /** When its end of data arrived, epoch milliseconds. */
  receivedAt: number;
  /** The message as received (the bytes after DATA, dot-unstuffed, up to the size limit). */
  raw: Uint8Array;
  /**
   * The message the first recipient's return-path token names, when its signature verifies (the server checked it
   * with the service's key); absent otherwise. It is the record's key, so that reports about one message stay in
   * order on one partition. Readers check every recipient's token themselves.
   */
  messageId?: string;
  /**
   * true: the MX took it for an organization's own (verified) inbound domain, so it is inbound mail whatever the
   * domain; absent: told by the first recipient's domain (isInboundMail).
   */
  inbound?: boolean;
}

export type MailReceived = DomainEvent<'MailReceived', MailReceivedData>;
export type ReceivedMailEvent = MailReceived;
export const RECEIVED_MAIL_EVENT_TYPES = ['MailReceived'] as const satisfies readonly ReceivedMailEvent['type'][];

/** Record a message as it arrived; the receivedId and the time come in with it, the event id in the metadata. */
export type RecordMailReceived = Command<'RecordMailReceived', MailReceivedData>;
export type ReceivedMailCommand = RecordMailReceived;

export type ReceivedMailState = { status: 'None' } | { status: 'Received'; receivedId: string };

export function initialReceivedMailState(): ReceivedMailState {
  return { status: 'None' };
}

export function evolveReceivedMail(_state: ReceivedMailState, event: ReceivedMailEvent): ReceivedMailState {
  switch (event.type) {
    case 'MailReceived':
      return { status: 'Received', receivedId: event.data.receivedId };
    default:
      return assertNever(event.type);
  }
}

/** A message is recorded once: a second RecordMailReceived of the same stream decides nothing. */
export function decideReceivedMail(command: ReceivedMailCommand, state: ReceivedMailState): ReceivedMailEvent[] {
  switch (command.type) {
    case 'RecordMailReceived': {
      if (state.status === 'Received') return [];
      const { messageId, inbound, ...data } = command.data;
      return [
        {
          type: 'MailReceived',
          data: {
            ...data,
            envelopeTo: [...data.envelopeTo],
            ...(messageId !== undefined ? { messageId } : {}),
            ...(inbound === true ? { inbound } : {}),
          },
          metadata: eventMetadata({ ...command.metadata, organizationId: NO_ORGANIZATION })(),
        },
      ];
    }
    default:
      return assertNever(command.type);
  }
}

export type ReceivedMailDecider = Decider<ReceivedMailState, ReceivedMailCommand, ReceivedMailEvent>;

export const receivedMailDecider: ReceivedMailDecider = {
  initialState: initialReceivedMailState,
  decide: decideReceivedMail,
  evolve: evolveReceivedMail,
};

/**
 * Whether a received mail is inbound mail (for an organization's inbound address) rather than mail that came back
 * to a return path: the MX takes one kind per transaction, so its first recipient tells (or the MX's mark, for an
 * organization's own inbound domain). Each reader of
 * mail.received passes over the other's.
 */
export function isInboundMail(
  mail: { envelopeTo: readonly string[]; inbound?: boolean },
  inboundDomain: string,
): boolean {
  if (mail.inbound === true) return true;
  const first = mail.envelopeTo[0];
  if (first === undefined) return false;
  return (
    first
      .slice(first.lastIndexOf('@') + 1)
      .toLowerCase()
      .replace(/\.$/, '') === inboundDomain.toLowerCase()
  );
}
