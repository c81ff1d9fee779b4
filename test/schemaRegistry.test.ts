import { describe, expect, it } from 'vitest';
import { COMPATIBILITY, SchemaType } from '@kafkajs/confluent-schema-registry';
import { EventCodec, subjectOf } from '@sendline/infra';
import { schemaOf, type AvroRecordSchema } from '@sendline/schemas';
import { addresses, uniqueName } from './support/services';

function withDataFields(schema: AvroRecordSchema, extra: object[]): AvroRecordSchema {
  const copy = JSON.parse(JSON.stringify(schema)) as AvroRecordSchema;
  const data = copy.fields.find((field) => field.name === 'data')!.type as { fields: object[] };
  data.fields.push(...extra);
  return copy;
}

describe('the schema registry (BACKWARD compatibility per event subject)', () => {
  const codec = new EventCodec(addresses.schemaRegistryUrl);
  const register = (schema: AvroRecordSchema, subject: string) =>
    codec.registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify(schema) },
      { subject, compatibility: COMPATIBILITY.BACKWARD },
    );

  it('registers each event type under <topic>-<namespace.Record> with BACKWARD compatibility', async () => {
    const topic = uniqueName('schema-test');
    await codec.schemaId(topic, 'SuppressionAdded');
    const subject = subjectOf(topic, schemaOf('SuppressionAdded'));
    const config = await fetch(`${addresses.schemaRegistryUrl}/config/${encodeURIComponent(subject)}`);
    expect(((await config.json()) as { compatibilityLevel: string }).compatibilityLevel).toBe('BACKWARD');
  });

  it('refuses an incompatible change: a new field without a default', async () => {
    const subject = subjectOf(uniqueName('schema-test'), schemaOf('SuppressionAdded'));
    await register(schemaOf('SuppressionAdded'), subject);
    const incompatible = withDataFields(schemaOf('SuppressionAdded'), [{ name: 'campaign', type: 'string' }]);
    await expect(register(incompatible, subject)).rejects.toThrow(/incompatible|409|compatib/i);
  });

  it('accepts a compatible change: a new optional field with a default', async () => {
    const subject = subjectOf(uniqueName('schema-test'), schemaOf('SuppressionAdded'));
    const first = await register(schemaOf('SuppressionAdded'), subject);
    const compatible = withDataFields(schemaOf('SuppressionAdded'), [
      { name: 'note', type: ['null', 'string'], default: null },
    ]);
    const second = await register(compatible, subject);
    expect(second.id).not.toBe(first.id);
    const versions = await fetch(`${addresses.schemaRegistryUrl}/subjects/${encodeURIComponent(subject)}/versions`);
    expect(await versions.json()).toEqual([1, 2]);
  });
});
