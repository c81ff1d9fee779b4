import { TEMPLATE_EVENT_TYPES, type TemplateEvent } from '@sendline/domain';
import type { Redis } from '../../redis/client';
import { positionedHandler, type BatchHandler } from '../apply';
import type { TemplatesView } from './view';

const templateTypes = new Set<string>(TEMPLATE_EVENT_TYPES);

/** Applies a batch of the `accounts` topic to the templates view (the other account events are skipped). */
export function templatesHandler(view: TemplatesView, redis: Redis, positionsKey: string): BatchHandler {
  return positionedHandler(redis, positionsKey, (batch, event) => {
    if (templateTypes.has(event.type)) view.write(batch, event as TemplateEvent);
  });
}
