import type { MessageAccepted } from '@sendline/domain';
import type { Redis } from '../../redis/client';
import { positionedHandler, type BatchHandler } from '../apply';
import type { AllowanceView } from './view';

/** Counts each MessageAccepted of `email.messages` in the allowance view, once per MessageID. */
export function allowanceHandler(view: AllowanceView, redis: Redis, positionsKey: string): BatchHandler {
  return positionedHandler(redis, positionsKey, (batch, event) => {
    if (event.type === 'MessageAccepted') view.write(batch, event as MessageAccepted);
  });
}
