/**
 * A view's replay: rebuilds it from its topics beside the live one (the RebuildableView of the view's entry in
 * infra's registry, infra/src/views/registry.ts), catches up with the live projection, compares them per
 * organization and swaps the copy in when they agree. Orchestration only: the reads are the event store's, the
 * offsets Kafka's (infra/src/kafka/offsets.ts), which view reads which topic and how it is rebuilt the registry's.
 * The operator's command (`admin replay`) and the tests call it.
 */
export * from './replay';
