import { createHash } from 'node:crypto';

/**
 * Event ids derived from what the event is about (a name-based UUID, version 5 layout, SHA-1), so that
 * an event decided again after a crash (at-least-once) carries the same id as the first time and
 * readers can drop the duplicate.
 */
const NAMESPACE = 'sendline.sender';

export function eventIdFor(...parts: (string | number)[]): string {
  const hash = createHash('sha1').update(NAMESPACE).update('\0').update(parts.join('\0')).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
