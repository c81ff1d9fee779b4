import { createHash } from 'node:crypto';

/**
 * A name-based UUID (version 5 layout, SHA-1): the same namespace and parts always give the same id.
 * Used where an id must come out the same when the same thing is decided again — a keyed send retried
 * after a 503 or a worker's death (its MessageID), an event decided again after a crash (its event id) —
 * so that every reader can tell the second copy for the first.
 */
export function nameBasedId(namespace: string, ...parts: (string | number)[]): string {
  const hash = createHash('sha1').update(namespace).update('\0').update(parts.join('\0')).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
