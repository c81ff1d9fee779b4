/**
 * The returns reader: what the mail that comes back to our return path (DSNs, spam complaints, automatic replies)
 * says of the messages we sent, recorded as the domain decides (match.ts), read from mail.received (reader.ts).
 */
export { returnsConfigFromEnv, type ReturnsConfig } from './config';
export {
  decideReturn,
  messageOf,
  type ReadReport,
  type ReceivedMail,
  type ReturnDecision,
  type Unmatched,
} from './match';
export { ReturnsReader, type MailReceivedEvent, type ReturnsReaderOptions, type ReturnsReport } from './reader';
export { readReportOf } from './report';
