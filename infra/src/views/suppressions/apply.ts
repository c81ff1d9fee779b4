import { SUPPRESSION_EVENT_TYPES, type SuppressionEvent } from '@sendline/domain';
import type { Redis } from '../../redis/client';
import { positionedHandler, type BatchHandler } from '../apply';
import type { SuppressionView } from './view';

const suppressionTypes = new Set<string>(SUPPRESSION_EVENT_TYPES);

/** Applies a batch of `email.suppressions` to the suppression view. */
export function suppressionsHandler(view: SuppressionView, redis: Redis, positionsKey: string): BatchHandler {
  return positionedHandler(redis, positionsKey, (batch, event) => {
    if (suppressionTypes.has(event.type)) view.write(batch, event as SuppressionEvent);
  });
}
