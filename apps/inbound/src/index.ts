/**
 * The inbound reader: mail for the organizations' inbound addresses, read from mail.received, parsed into Postmark's
 * inbound JSON (payload.ts), recorded and scheduled for posting to the InboundHookUrl (reader.ts).
 */
export { inboundConfigFromEnv, type InboundConfig } from './config';
export { inboundPayloadOf, MAX_PAYLOAD_BYTES, strippedReply, type InboundPayload } from './payload';
export { InboundReader, type InboundDirectory, type InboundReaderOptions } from './reader';
