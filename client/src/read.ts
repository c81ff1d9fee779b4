import type { JsonValue } from './types';

/** The answer did not have the expected shape; the client turns it into `invalid_response`. */
export class ShapeError extends Error {
  constructor(
    readonly path: string,
    readonly expected: string,
  ) {
    super(`expected ${expected} at ${path}`);
    this.name = 'ShapeError';
  }
}

export type Obj = Record<string, unknown>;

export function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads fields of one object of an answer, naming the path in errors (e.g. `Messages[2].MessageID`). */
export class Reader {
  private constructor(
    private readonly value: Obj,
    readonly path: string,
  ) {}

  static of(value: unknown, path: string): Reader {
    if (!isObject(value)) throw new ShapeError(path, 'an object');
    return new Reader(value, path);
  }

  private at(key: string): string {
    return this.path === '' ? key : `${this.path}.${key}`;
  }

  has(key: string): boolean {
    return this.value[key] !== undefined && this.value[key] !== null;
  }

  raw(key: string): unknown {
    return this.value[key];
  }

  string(key: string): string {
    const v = this.value[key];
    if (typeof v !== 'string') throw new ShapeError(this.at(key), 'a string');
    return v;
  }

  /** A string, or null when missing or null. */
  nullableString(key: string): string | null {
    const v = this.value[key];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string') throw new ShapeError(this.at(key), 'a string or null');
    return v;
  }

  optionalString(key: string): string | undefined {
    return this.nullableString(key) ?? undefined;
  }

  stringOr(key: string, fallback: string): string {
    return this.nullableString(key) ?? fallback;
  }

  number(key: string): number {
    const v = this.value[key];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new ShapeError(this.at(key), 'a number');
    return v;
  }

  boolean(key: string): boolean {
    const v = this.value[key];
    if (typeof v !== 'boolean') throw new ShapeError(this.at(key), 'a boolean');
    return v;
  }

  booleanOr(key: string, fallback: boolean): boolean {
    return this.has(key) ? this.boolean(key) : fallback;
  }

  oneOf<const T extends string>(key: string, allowed: readonly T[]): T {
    const v = this.value[key];
    const found = allowed.find((a) => a === v);
    if (found === undefined) throw new ShapeError(this.at(key), `one of ${allowed.join(', ')}`);
    return found;
  }

  array<T>(key: string, item: (value: unknown, path: string) => T): T[] {
    return readArray(this.value[key], this.at(key), item);
  }

  /** An array, or `[]` when missing or null. */
  arrayOr<T>(key: string, item: (value: unknown, path: string) => T): T[] {
    return this.has(key) ? this.array(key, item) : [];
  }

  object(key: string): Reader {
    return Reader.of(this.value[key], this.at(key));
  }

  /** A map of string to string, or `{}` when missing or null. */
  stringMapOr(key: string): Record<string, string> {
    if (!this.has(key)) return {};
    const inner = this.object(key);
    const out: Record<string, string> = {};
    for (const k of Object.keys(inner.value)) out[k] = inner.string(k);
    return out;
  }
}

export function readArray<T>(value: unknown, path: string, item: (value: unknown, path: string) => T): T[] {
  if (!Array.isArray(value)) throw new ShapeError(path, 'an array');
  return value.map((v: unknown, i) => item(v, `${path}[${i}]`));
}

export function readString(value: unknown, path: string): string {
  if (typeof value !== 'string') throw new ShapeError(path, 'a string');
  return value;
}

/**
 * PascalCase (or camelCase) key to camelCase, treating a run of capitals as one
 * word: MessageID → messageId, DestinationIP → destinationIp, HTMLBody → htmlBody.
 */
export function camelCaseKey(key: string): string {
  const words = key.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+/g);
  if (words === null) return key;
  return words
    .map((w, i) => (i === 0 ? w.toLowerCase() : w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()))
    .join('');
}

/** A JSON value with every object key camelCased, at any depth. */
export function camelCaseJson(value: unknown, path: string): JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (Array.isArray(value)) return value.map((v: unknown, i) => camelCaseJson(v, `${path}[${i}]`));
  if (isObject(value)) {
    const out: { [key: string]: JsonValue } = {};
    for (const [k, v] of Object.entries(value)) out[camelCaseKey(k)] = camelCaseJson(v, `${path}.${k}`);
    return out;
  }
  throw new ShapeError(path, 'a JSON value');
}
