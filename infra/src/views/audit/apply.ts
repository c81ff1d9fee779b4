import { ACCOUNT_EVENT_TYPES, TEMPLATE_EVENT_TYPES, type AuditedEvent } from '@sendline/domain';
import type { Redis } from '../../redis/client';
import { positionedHandler, type BatchHandler } from '../apply';
import type { AuditView } from './view';

const auditedTypes = new Set<string>([...ACCOUNT_EVENT_TYPES, ...TEMPLATE_EVENT_TYPES]);

/** Applies a batch of the `accounts.history` topic to the audit view: account and template events. */
export function auditHandler(view: AuditView, redis: Redis, positionsKey: string): BatchHandler {
  return positionedHandler(redis, positionsKey, (batch, event) => {
    if (auditedTypes.has(event.type)) view.write(batch, event as AuditedEvent);
  });
}
