import { NO_ORGANIZATION, type RecordMailReceived } from '@sendline/domain';
import { readReturnPathAddress } from '@sendline/infra';

/** What the SMTP session knew when the message's end of data arrived. */
export interface ReceivedEnvelope {
  /** MAIL FROM, empty for `<>`. */
  envelopeFrom: string;
  /** RCPT TO accepted, in order. */
  envelopeTo: string[];
  remoteAddress: string;
  heloName: string;
  /** Taken for an organization's own inbound domain: marked inbound mail (the readers cannot tell it by domain). */
  inbound?: boolean;
}

/**
 * The command that records one received message. Its key on mail.received is the message the first recipient's
 * return-path token names, when the token verifies under the service's key (`tokenKey`: returnPathKey of the
 * secret key); otherwise the fresh receivedId. Ids and time come from the caller.
 */
export function recordMailReceived(
  envelope: ReceivedEnvelope,
  raw: Buffer,
  ids: { receivedId: string; eventId: string },
  now: number,
  tokenKey: Buffer,
): RecordMailReceived {
  const first = envelope.envelopeTo[0];
  const reading = first === undefined ? undefined : readReturnPathAddress(tokenKey, first);
  return {
    type: 'RecordMailReceived',
    data: {
      receivedId: ids.receivedId,
      envelopeFrom: envelope.envelopeFrom,
      envelopeTo: envelope.envelopeTo,
      remoteAddress: envelope.remoteAddress,
      heloName: envelope.heloName,
      receivedAt: now,
      raw,
      ...(reading?.ok ? { messageId: reading.messageId } : {}),
      ...(envelope.inbound === true ? { inbound: true } : {}),
    },
    metadata: { organizationId: NO_ORGANIZATION, now, eventIds: [ids.eventId] },
  };
}
