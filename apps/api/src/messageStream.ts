import { OUTBOUND_STREAM } from '@sendline/domain';
import { ApiError } from './errors';

/**
 * The one check of a message stream a request names in its path or a filter: the service has only `outbound`;
 * any other is ErrorCode 1235, answered after the key is checked (the schemas let every name through, see
 * openapi.ts's `documentedEnum`). A send's MessageStream is checked by the domain with the message's other fields.
 */
export function assertOutboundStream(stream: string): void {
  if (stream !== OUTBOUND_STREAM) {
    throw new ApiError('InvalidMessageStream', {
      detail: `The message stream '${stream}' does not exist; the only stream is '${OUTBOUND_STREAM}'.`,
    });
  }
}
