/**
 * A view's replay: rebuilds it from its topics beside the live one (the view's own RebuildableView,
 * infra/src/views/<view>/), catches up with the live projection, compares them per organization and swaps the
 * copy in when they agree. Orchestration only: the reads are the event store's, the offsets Kafka's
 * (infra/src/kafka/offsets.ts), which view reads which topic infra's projections (infra/src/views/projections.ts).
 * The operator's command (`admin replay`) and the tests call it.
 */
export * from './replay';
