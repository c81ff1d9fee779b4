import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The event schemas: one Avro schema per event type, read from schemas/avro/<EventType>.avsc.
 *
 * Every schema is a record named after its event type (namespace `sendline.events`)
 * whose fields are the envelope (eventId, organizationId, occurredAt, schemaVersion)
 * followed by `data`, a record holding the event's own fields.
 */
export interface AvroRecordSchema {
  type: 'record';
  name: string;
  namespace?: string;
  fields: Array<{ name: string; type: unknown; default?: unknown; doc?: string }>;
  doc?: string;
}

export const avroDirectory = join(dirname(fileURLToPath(import.meta.url)), '..', 'avro');

function loadSchemas(): ReadonlyMap<string, AvroRecordSchema> {
  const schemas = new Map<string, AvroRecordSchema>();
  for (const file of readdirSync(avroDirectory).sort()) {
    if (!file.endsWith('.avsc')) continue;
    const schema = JSON.parse(readFileSync(join(avroDirectory, file), 'utf8')) as AvroRecordSchema;
    const expected = file.slice(0, -'.avsc'.length);
    if (schema.name !== expected) {
      throw new Error(`schemas/avro/${file}: record name ${schema.name} must equal the file name ${expected}`);
    }
    schemas.set(schema.name, schema);
  }
  return schemas;
}

/** Event type → its Avro schema. */
export const eventSchemas: ReadonlyMap<string, AvroRecordSchema> = loadSchemas();

export function schemaOf(eventType: string): AvroRecordSchema {
  const schema = eventSchemas.get(eventType);
  if (!schema) throw new Error(`no Avro schema for event type ${eventType} in schemas/avro`);
  return schema;
}

/** Full Avro name (namespace.name), the record part of the registry subject. */
export function fullNameOf(schema: AvroRecordSchema): string {
  return schema.namespace ? `${schema.namespace}.${schema.name}` : schema.name;
}
