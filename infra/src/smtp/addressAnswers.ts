/**
 * How the test mail server (testMailServer.ts) answers each recipient at RCPT TO, by the recipient's local part
 * (case-insensitive):
 *
 * | local part starts with | answer                                                           |
 * |------------------------|------------------------------------------------------------------|
 * | `hardbounce`           | 550 5.1.1 user unknown                    (→ hard bounce)          |
 * | `policy`               | 550 5.7.1 refused by policy               (→ policy rejection)     |
 * | `mailboxfull`          | 552 5.2.2 mailbox full                    (→ soft bounce)          |
 * | `defer<N>+`, e.g. `defer2+x` | 450 4.2.0 the first N times this address is tried, then 250 |
 * | `defer` (otherwise)    | 450 4.2.0 mailbox temporarily unavailable, every time           |
 * | `drop`                 | no answer: the connection is dropped                             |
 * | `bouncelater`          | 250, then a moment later a DSN (5.1.1 user unknown) to the envelope sender |
 * | `spamcomplaint`        | 250, then a moment later an ARF abuse report to the envelope sender |
 * | anything else          | 250                                                              |
 *
 * The two reports after a 250 (`later`) are what a real recipient's server and a mailbox provider's feedback loop
 * send back: the test server builds them (testReports.ts) and delivers them from `<>` to the message's envelope
 * sender through our MX (TestMailServerOptions.reports).
 */

/** What the server sends back after accepting a recipient: a bounce (DSN) or a complaint (ARF). */
export type LaterReport = 'bounce' | 'complaint';

export type AddressAnswer =
  { action: 'accept'; later?: LaterReport } | { action: 'refuse'; code: number; message: string } | { action: 'drop' };

/**
 * The answer for a recipient address; `deferredSoFar` is how many times this server already deferred it.
 * The rule table is above.
 */
export function answerForAddress(address: string, deferredSoFar: number): AddressAnswer {
  const local = address.slice(0, address.lastIndexOf('@')).toLowerCase();
  if (local.startsWith('hardbounce')) {
    return { action: 'refuse', code: 550, message: `5.1.1 <${address}>: Recipient address rejected: User unknown` };
  }
  if (local.startsWith('policy')) {
    return { action: 'refuse', code: 550, message: `5.7.1 <${address}>: Message refused by policy` };
  }
  if (local.startsWith('mailboxfull')) {
    return { action: 'refuse', code: 552, message: `5.2.2 <${address}>: Mailbox full` };
  }
  if (local.startsWith('drop')) return { action: 'drop' };
  if (local.startsWith('bouncelater')) return { action: 'accept', later: 'bounce' };
  if (local.startsWith('spamcomplaint')) return { action: 'accept', later: 'complaint' };
  if (local.startsWith('defer')) {
    const limited = /^defer(\d+)\+/.exec(local);
    if (limited && deferredSoFar >= Number(limited[1])) return { action: 'accept' };
    return { action: 'refuse', code: 450, message: `4.2.0 <${address}>: Mailbox temporarily unavailable` };
  }
  return { action: 'accept' };
}
