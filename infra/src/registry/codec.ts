import { SchemaRegistry, SchemaType, COMPATIBILITY } from '@kafkajs/confluent-schema-registry';
import avro from 'avsc';
import {
  fromAvroRecord,
  fullNameOf,
  schemaOf,
  toAvroRecord,
  type AvroEventRecord,
  type AvroRecordSchema,
} from '@sendline/schemas';
import { ServiceUnavailableError } from '../availability';
import { InfrastructureError } from '../errors';

export interface EncodableEvent {
  type: string;
  data: object;
  metadata: { eventId: string; organizationId: string; occurredAt: number; schemaVersion: number };
}

/** Subject of an event type on a topic: TopicRecordNameStrategy, `<topic>-<namespace.Record>`. */
export function subjectOf(topic: string, schema: AvroRecordSchema): string {
  return `${topic}-${fullNameOf(schema)}`;
}

/**
 * Encodes events in the Confluent wire format (magic byte, schema id, Avro body)
 * and decodes them back, through the schema registry. Schema ids are cached per
 * subject, so a schema is registered once per process.
 */
export class EventCodec {
  readonly registry: SchemaRegistry;
  private readonly ids = new Map<string, Promise<number>>();
  private readonly typeById = new Map<number, Promise<string>>();
  private readonly decoders = new Map<number, Promise<{ type: string; read(body: Buffer): unknown }>>();

  constructor(readonly registryUrl: string) {
    this.registry = new SchemaRegistry({ host: registryUrl, retry: { retries: 3 } });
  }

  /** Registers (once) the event type's schema under its subject on `topic`, compatibility BACKWARD. */
  schemaId(topic: string, eventType: string): Promise<number> {
    const schema = schemaOf(eventType);
    const subject = subjectOf(topic, schema);
    let id = this.ids.get(subject);
    if (!id) {
      id = this.registry
        .register(
          { type: SchemaType.AVRO, schema: JSON.stringify(schema) },
          { subject, compatibility: COMPATIBILITY.BACKWARD },
        )
        .then((registered) => registered.id)
        .catch((cause: unknown) => {
          this.ids.delete(subject);
          throw new InfrastructureError('SchemaRegistrationFailed', `could not register ${subject}: ${String(cause)}`, {
            retriable: true,
            cause,
          });
        });
      this.ids.set(subject, id);
    }
    return id;
  }

  async encode(topic: string, event: EncodableEvent): Promise<Buffer> {
    const id = await this.schemaId(topic, event.type);
    try {
      return await this.registry.encode(id, toAvroRecord(event));
    } catch (cause) {
      throw new InfrastructureError(
        'EventEncodingFailed',
        `event ${event.type} does not fit its schema: ${String(cause)}`,
        {
          retriable: false,
          cause,
        },
      );
    }
  }

  async decode(value: Buffer): Promise<EncodableEvent> {
    if (value.length < 5 || value[0] !== 0) {
      throw new InfrastructureError('NotConfluentAvro', 'the value is not in the Confluent Avro wire format', {
        retriable: false,
      });
    }
    const id = value.readInt32BE(1);
    let decoder: { type: string; read(body: Buffer): unknown };
    try {
      decoder = await this.decoderFor(id);
    } catch (cause) {
      throw registryFailure(cause, id);
    }
    return fromAvroRecord(decoder.type, decoder.read(value.subarray(5)) as AvroEventRecord) as EncodableEvent;
  }

  /**
   * A decoder per writer schema id, cached: the writer's schema (from the registry)
   * resolved once against our reader schema (schemas/avro), so an event written with
   * an older compatible schema reads as the current shape.
   */
  private decoderFor(id: number): Promise<{ type: string; read(body: Buffer): unknown }> {
    let decoder = this.decoders.get(id);
    if (!decoder) {
      decoder = (async () => {
        const type = await this.typeOf(id);
        const writer = (await this.registry.getSchema(id)) as unknown as avro.Type;
        const reader = avro.Type.forSchema(schemaOf(type) as avro.Schema);
        const resolver = reader.createResolver(writer);
        return { type, read: (body: Buffer) => reader.fromBuffer(body, resolver) };
      })();
      decoder.catch(() => this.decoders.delete(id));
      this.decoders.set(id, decoder);
    }
    return decoder;
  }

  private typeOf(id: number): Promise<string> {
    let type = this.typeById.get(id);
    if (!type) {
      type = this.registry.getSchema(id).then((schema) => {
        const name = (schema as { name?: string }).name;
        if (!name)
          throw new InfrastructureError('UnknownSchema', `schema ${id} has no record name`, { retriable: false });
        return name.split('.').pop() as string;
      });
      type.catch(() => this.typeById.delete(id));
      this.typeById.set(id, type);
    }
    return type;
  }
}

/**
 * A failure to fetch a writer's schema: the registry does not know the id (404: the event can never be read,
 * not retriable), or the registry could not be reached (retriable: a consumer waits for it instead of
 * dead-lettering a good event).
 */
function registryFailure(cause: unknown, id: number): InfrastructureError {
  if (cause instanceof InfrastructureError) return cause;
  const status = (cause as { status?: unknown } | null)?.status;
  if (status === 404 || status === 422) {
    return new InfrastructureError('UnknownSchema', `the registry has no schema ${id}: ${String(cause)}`, {
      retriable: false,
      cause,
    });
  }
  return new ServiceUnavailableError('registry', `cannot read schema ${id} from the registry: ${String(cause)}`, {
    retriable: true,
    cause,
  });
}
