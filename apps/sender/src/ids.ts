import { nameBasedId } from '@sendline/infra';

/**
 * Event ids derived from what the event is about (a name-based UUID), so that an event decided again
 * after a crash (at-least-once) carries the same id as the first time and readers can drop the duplicate.
 */
const NAMESPACE = 'sendline.sender';

export function eventIdFor(...parts: (string | number)[]): string {
  return nameBasedId(NAMESPACE, ...parts);
}
