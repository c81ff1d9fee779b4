/**
 * schemas/: the Avro schema of every event (avro/<EventType>.avsc) and the mapping between a domain event and its
 * Avro record. The schema registry and Kafka are infra's (infra/src/registry).
 */
export * from './eventSchemas';
export * from './avroRecord';
