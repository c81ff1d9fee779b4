import { createHash } from 'node:crypto';
import type { BatchHandler } from './apply';

/** What a replay compares per organization: how many rows, and a checksum of their content. */
export interface OrganizationFingerprint {
  organizationId: string;
  count: number;
  checksum: string;
  /** The count split by kind (e.g. messages and events). */
  counts: Record<string, number>;
}

/** Both copies of a view, fingerprinted per organization. */
export interface ViewFingerprints {
  live: Map<string, OrganizationFingerprint>;
  rebuilt: Map<string, OrganizationFingerprint>;
}

/**
 * A view as a replay rebuilds it: a fresh copy next to the live view, built from the log, compared with it,
 * and swapped in. Each view implements it where it lives (its key layout or its tables are its own), so the
 * replay orchestrates without knowing either.
 */
export interface RebuildableView {
  /** Where the live view is and where its copy is built (a Redis namespace, a ClickHouse database). */
  readonly live: string;
  readonly rebuilt: string;
  /** Makes the copy ready and empty (what an earlier replay left there is removed). */
  prepare(): Promise<void>;
  /** Applies a batch to the copy. */
  apply: BatchHandler;
  /** Resolves once everything applied to the copy is written. */
  settle(): Promise<void>;
  /** Both copies' fingerprints, per organization. */
  fingerprints(): Promise<ViewFingerprints>;
  /** Puts the copy in the live view's place, at once for readers. */
  swap(): Promise<void>;
  /** After a swap: applies a batch to the live view (what the live projection wrote to the old one meanwhile). */
  applyToLive: BatchHandler;
  settleLive(): Promise<void>;
  /** Removes the copy (not swapped in). */
  discard(): Promise<void>;
  /** After a swap: drops (or keeps) the replaced view; answers where it was kept. */
  retire(keep: boolean): Promise<string | undefined>;
}

/** JSON with object keys and Map entries sorted, so equal content hashes equally. */
export function canonicalJson(value: unknown): string {
  if (value instanceof Map) return canonicalJson(Object.fromEntries([...value].sort(([a], [b]) => (a < b ? -1 : 1))));
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The checksum of a fingerprint: SHA-256 of the content's canonical JSON. */
export const checksumOf = (value: unknown) => createHash('sha256').update(canonicalJson(value)).digest('hex');

/**
 * How many organizations a fingerprint reads at once. The Redis client's command timeout (800 ms, fail-fast for the
 * API) runs from when a command is written: a hundred HGETALLs of a few thousand entries each, sent in one
 * pipeline, are parsed for longer than that on a busy machine, and the replay of 200,000 suppressions failed with
 * "Command timed out" (bench:projector). Ten at a time keeps each read short at no cost worth measuring.
 */
export const FINGERPRINT_CONCURRENCY = 10;

/** Runs `run` on every item, `size` at a time. */
export async function inChunks<T, R>(items: T[], size: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) results.push(...(await Promise.all(items.slice(i, i + size).map(run))));
  return results;
}
