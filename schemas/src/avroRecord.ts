import { schemaOf } from './eventSchemas';

/**
 * Between a domain event `{ type, data, metadata }` and the Avro record its schema describes
 * `{ eventId, organizationId, occurredAt, schemaVersion, data }` (the type is the record's name).
 *
 * Optional fields. The domain has two kinds of "no value":
 * - an absent optional field (`tag?: string`, value `undefined`), and
 * - an explicit null (`messagesPerMonth: number | null`, "unlimited").
 * Avro has only null (a `["null", T]` union with `"default": null`). Going to Avro both become null.
 * Coming back, a null stays null unless the schema marks the field `"sendline.optional": true`, in which
 * case the field is left out (so it reads as `undefined`, as the domain wrote it). Avro tools ignore
 * such extra field attributes; the marker lives in the schema files next to the field it describes.
 *
 * `fromAvroRecord` also turns what the Avro library decodes (instances of generated record classes) into
 * plain objects, so decoded events compare equal to the ones the deciders make.
 */

export interface AvroEventRecord {
  eventId: string;
  organizationId: string;
  occurredAt: number;
  schemaVersion: number;
  data: unknown;
  /** Only in the schemas that record who made a change (account events), null when not said. */
  actor?: string | null;
}

export interface EnvelopedEvent {
  type: string;
  data: unknown;
  metadata: { eventId: string; organizationId: string; occurredAt: number; schemaVersion: number; actor?: string };
}

/** Whether the event type's schema has the envelope's optional `actor` field (account events do). */
function recordsActor(eventType: string): boolean {
  return schemaOf(eventType).fields.some((field) => field.name === 'actor');
}

export const OPTIONAL_FIELD_MARKER = 'sendline.optional';

/**
 * A `bytes` field's value as Avro writes it: the domain types bytes as `Uint8Array` (it knows no Node `Buffer`),
 * avsc takes only a `Buffer`. A Buffer is kept as it is; any other view is wrapped without a copy. Read back, a
 * `bytes` field is a Buffer, which is a Uint8Array.
 */
function asBuffer(view: ArrayBufferView): Buffer {
  return Buffer.isBuffer(view) ? view : Buffer.from(view.buffer, view.byteOffset, view.byteLength);
}

function undefinedToNull(value: unknown): unknown {
  if (value === undefined) return null;
  if (ArrayBuffer.isView(value)) return asBuffer(value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = undefinedToNull(value[i]);
    return out;
  }
  // A null-prototype object: a key such as "__proto__" (metadata is the caller's) is an ordinary field.
  const out = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value)) out[key] = undefinedToNull((value as Record<string, unknown>)[key]);
  return out;
}

/** The Avro record of a domain event: metadata flattened, data kept, `undefined` written as null. */
export function toAvroRecord(event: EnvelopedEvent): AvroEventRecord {
  const { eventId, organizationId, occurredAt, schemaVersion, actor } = event.metadata;
  const record: AvroEventRecord = {
    eventId,
    organizationId,
    occurredAt,
    schemaVersion,
    data: undefinedToNull(event.data),
  };
  if (recordsActor(event.type)) record.actor = actor ?? null;
  return record;
}

// ── Reading back, guided by the schema ──────────────────────────────────────

type SchemaNode = unknown;
interface FieldNode {
  name: string;
  type: SchemaNode;
  [attribute: string]: unknown;
}

const NAMED_TYPES = new Set(['record', 'error', 'enum', 'fixed']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fullName(name: string, namespace: string | undefined): string {
  return name.includes('.') || !namespace ? name : `${namespace}.${name}`;
}

/** Every named type defined anywhere in the schema, by full name (a reference may precede nothing visited). */
function collectNames(node: SchemaNode, namespace: string | undefined, names: Map<string, SchemaNode>): void {
  if (Array.isArray(node)) {
    for (const branch of node) collectNames(branch, namespace, names);
    return;
  }
  if (!isObject(node)) return;
  const type = node.type;
  if (typeof type === 'string' && NAMED_TYPES.has(type) && typeof node.name === 'string') {
    const name = fullName(node.name, typeof node.namespace === 'string' ? node.namespace : namespace);
    names.set(name, node);
    const inner = name.includes('.') ? name.slice(0, name.lastIndexOf('.')) : undefined;
    if (Array.isArray(node.fields)) {
      for (const field of node.fields as FieldNode[]) collectNames(field.type, inner, names);
    }
    return;
  }
  if (type === 'array') collectNames(node.items, namespace, names);
  else if (type === 'map') collectNames(node.values, namespace, names);
  else if (isObject(type) || Array.isArray(type)) collectNames(type, namespace, names);
}

function namespaceOf(node: Record<string, unknown>, enclosing: string | undefined): string | undefined {
  if (typeof node.name !== 'string') return enclosing;
  const name = fullName(node.name, typeof node.namespace === 'string' ? node.namespace : enclosing);
  return name.includes('.') ? name.slice(0, name.lastIndexOf('.')) : undefined;
}

function read(
  node: SchemaNode,
  value: unknown,
  namespace: string | undefined,
  names: Map<string, SchemaNode>,
): unknown {
  if (typeof node === 'string') {
    const named = names.get(fullName(node, namespace)) ?? names.get(node);
    return named === undefined ? value : read(named, value, namespace, names);
  }
  if (Array.isArray(node)) {
    if (value === null) return null;
    const branches = node.filter((branch) => branch !== 'null');
    return branches.length === 1 ? read(branches[0], value, namespace, names) : value;
  }
  if (!isObject(node)) return value;
  switch (node.type) {
    case 'record':
    case 'error': {
      if (!isObject(value)) return value;
      const inner = namespaceOf(node, namespace);
      const out: Record<string, unknown> = {};
      for (const field of node.fields as FieldNode[]) {
        const item = read(field.type, value[field.name], inner, names);
        if (item === null && field[OPTIONAL_FIELD_MARKER] === true) continue;
        if (item === undefined) continue;
        Object.defineProperty(out, field.name, { value: item, enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    case 'array':
      return Array.isArray(value) ? value.map((item) => read(node.items, item, namespace, names)) : value;
    case 'map': {
      if (!isObject(value)) return value;
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        Object.defineProperty(out, key, {
          value: read(node.values, item, namespace, names),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    default:
      // enum, fixed, a primitive with a logical type, or a nested type definition.
      if (isObject(node.type) || Array.isArray(node.type)) return read(node.type, value, namespace, names);
      return value;
  }
}

const namesCache = new Map<string, Map<string, SchemaNode>>();

function namesOf(eventType: string): Map<string, SchemaNode> {
  let names = namesCache.get(eventType);
  if (!names) {
    names = new Map();
    const schema = schemaOf(eventType);
    collectNames(schema, schema.namespace, names);
    namesCache.set(eventType, names);
  }
  return names;
}

/** The domain event of a decoded Avro record of `eventType` (see the module note on optional fields). */
export function fromAvroRecord(eventType: string, record: AvroEventRecord): EnvelopedEvent {
  const schema = schemaOf(eventType);
  const plain = read(schema, record, schema.namespace, namesOf(eventType)) as AvroEventRecord;
  const { eventId, organizationId, occurredAt, schemaVersion, data, actor } = plain;
  return {
    type: eventType,
    data,
    metadata: { eventId, organizationId, occurredAt, schemaVersion, ...(typeof actor === 'string' ? { actor } : {}) },
  };
}
