import { ACCOUNT_EVENT_TYPES, type AccountEvent } from '@sendline/domain';
import type { Redis } from '../../redis/client';
import { positionedHandler, type BatchHandler } from '../apply';
import type { AuditView } from './view';

const accountTypes = new Set<string>(ACCOUNT_EVENT_TYPES);

/** Applies a batch of the `accounts.history` topic to the audit view (events of other types are skipped). */
export function auditHandler(view: AuditView, redis: Redis, positionsKey: string): BatchHandler {
  return positionedHandler(redis, positionsKey, (batch, event) => {
    if (accountTypes.has(event.type)) view.write(batch, event as AccountEvent);
  });
}
