import { addressesNamedBy, outcomeWeight, returnedOutcomes, type ReturnedMail } from '@sendline/domain';
import type { ReadReport } from './match';

/**
 * A returned mail as parsed (infra's readReturnedMail, the domain's verdicts) in the shape matching needs: which
 * message its attached original names, which addresses it names, and what it says of one recipient.
 *
 * Of one recipient: the reading that names that address; else, when the recipient is known without the report's
 * word (the return-path token names exactly one, or the message has only one), the weightiest reading of the mail
 * (a forwarding mailbox reports its final address, not ours) — else the mail is not about it (`NotAbout`).
 */
export function readReportOf(mail: ReturnedMail): ReadReport {
  if (mail.kind === 'Unrecognized') {
    return { namedRecipients: [], outcomeOf: () => 'NotAbout', unreadable: mail.reason };
  }
  const readings = returnedOutcomes(mail);
  // Only a complaint may be matched by the original's header (see match.ts): a bounce or a reply always comes to the
  // envelope sender, our signed token.
  const sendlineMessageId = mail.kind === 'Complaint' ? mail.original.sendlineMessageId : undefined;
  return {
    ...(sendlineMessageId !== undefined && { sendlineMessageId }),
    namedRecipients: addressesNamedBy(mail),
    outcomeOf(recipient, onlyRecipient) {
      const wanted = recipient.toLowerCase();
      const named = readings.filter((reading) => reading.recipient?.toLowerCase() === wanted);
      const candidates =
        named.length > 0 ? named : onlyRecipient || readings.every((r) => !r.recipient) ? readings : [];
      if (candidates.length === 0) return 'NotAbout';
      return candidates.reduce((best, reading) =>
        outcomeWeight(reading.outcome) > outcomeWeight(best.outcome) ? reading : best,
      ).outcome;
    },
  };
}
