import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { InfrastructureError } from '../errors';

/**
 * A small DNS zone for development and tests: the TXT and MX records that the loopback DNS server
 * (server.ts) answers with. On disk it is a JSON file, by default `.local/dns-zone.json`:
 *
 *   { "records": [
 *       { "type": "TXT", "name": "_sendline.demo.sendline.test", "value": "sendline-verification=…" },
 *       { "type": "MX", "name": "bounces.demo.sendline.test", "value": "mail.sendline.dev", "priority": 10 } ] }
 *
 * The records are those that `domain add` prints (the domain's DnsRecord shape; extra fields such as
 * `purpose` are kept and ignored).
 */

export interface ZoneRecord {
  type: 'TXT' | 'MX';
  /** Owner name, without trailing dot; compared case-insensitively. */
  name: string;
  /** TXT: the logical string (split into 255-octet character-strings on the wire). MX: the exchange host. */
  value: string;
  /** MX only; default 10. */
  priority?: number;
}

/** Where the records come from at each query. */
export interface ZoneSource {
  records(): Promise<readonly ZoneRecord[]>;
}

export const DEFAULT_ZONE_FILE = '.local/dns-zone.json';

function badZone(path: string, why: string, cause?: unknown): InfrastructureError {
  return new InfrastructureError('BadZoneFile', `the DNS zone file ${path} ${why}`, { retriable: false, cause });
}

function parseZone(path: string, text: string): ZoneRecord[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw badZone(path, 'is not JSON', cause);
  }
  const records = (parsed as { records?: unknown } | null)?.records;
  if (!Array.isArray(records)) throw badZone(path, 'has no "records" array');
  return records.map((record: unknown, index) => {
    const r = record as Partial<ZoneRecord> | null;
    if (
      !r ||
      (r.type !== 'TXT' && r.type !== 'MX') ||
      typeof r.name !== 'string' ||
      typeof r.value !== 'string' ||
      (r.priority !== undefined && !Number.isInteger(r.priority))
    ) {
      throw badZone(path, `has a malformed record at index ${index} (needs type TXT|MX, name, value)`);
    }
    return r as ZoneRecord;
  });
}

/** The records of a zone file; none when the file does not exist. */
export async function readZoneFile(path: string): Promise<ZoneRecord[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw badZone(path, 'cannot be read', cause);
  }
  return parseZone(path, text);
}

/** Writes a zone file whole, atomically (a reader never sees half a file). */
export async function writeZoneFile(path: string, records: readonly ZoneRecord[]): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${randomUUID().slice(0, 8)}.tmp`;
  await writeFile(temporary, `${JSON.stringify({ records }, null, 2)}\n`, { mode: 0o644 });
  await rename(temporary, path);
}

const sameOwner = (a: ZoneRecord, b: ZoneRecord) => a.type === b.type && a.name.toLowerCase() === b.name.toLowerCase();

/**
 * Publishes records in a zone file: each replaces the records of the same name and type already there
 * (a domain added again publishes its new token and DKIM key), other records stay.
 */
export async function publishToZoneFile(path: string, records: readonly ZoneRecord[]): Promise<void> {
  const current = await readZoneFile(path);
  const kept = current.filter((existing) => !records.some((record) => sameOwner(existing, record)));
  await writeZoneFile(path, [
    ...kept,
    ...records.map(({ type, name, value, priority }) => ({
      type,
      name,
      value,
      ...(priority === undefined ? {} : { priority }),
    })),
  ]);
}

/** Removes these records (same type, name and value) from a zone file; every other record stays. */
export async function withdrawFromZoneFile(path: string, records: readonly ZoneRecord[]): Promise<void> {
  const current = await readZoneFile(path);
  const withdrawn = (existing: ZoneRecord) =>
    records.some(
      (record) => sameOwner(existing, record) && existing.value.toLowerCase() === record.value.toLowerCase(),
    );
  if (current.some(withdrawn))
    await writeZoneFile(
      path,
      current.filter((existing) => !withdrawn(existing)),
    );
}

/**
 * A zone read from a file, re-read whenever the file changes (checked at each query by its inode,
 * size and modification time, so an edit is seen by the very next query). A missing file is an empty zone.
 */
export function zoneFileSource(path: string): ZoneSource {
  let cached: { signature: string; records: ZoneRecord[] } | undefined;
  return {
    async records() {
      let signature: string;
      try {
        const info = await stat(path);
        signature = `${info.ino}:${info.size}:${info.mtimeMs}`;
      } catch (cause) {
        if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw badZone(path, 'cannot be read', cause);
      }
      if (cached?.signature !== signature) cached = { signature, records: await readZoneFile(path) };
      return cached.records;
    },
  };
}

/** A zone held in memory (tests): publish and withdraw records as the test goes. */
export class MemoryZone implements ZoneSource {
  private current: ZoneRecord[] = [];

  constructor(records: readonly ZoneRecord[] = []) {
    this.current = [...records];
  }

  async records(): Promise<readonly ZoneRecord[]> {
    return this.current;
  }

  /** Adds records; like publishToZoneFile, each replaces the records of the same name and type. */
  publish(...records: ZoneRecord[]): void {
    this.current = [...this.current.filter((e) => !records.some((r) => sameOwner(e, r))), ...records];
  }

  /** Removes every record at a name. */
  withdraw(name: string): void {
    this.current = this.current.filter((record) => record.name.toLowerCase() !== name.toLowerCase());
  }
}
