/**
 * The send use case: a Postmark send request (or a batch of them) becomes MessageAccepted in Kafka, after the
 * domain's checks, the suppression view and the organization's allowance. The API's POST /email and the system
 * mail of our own processes (sign-in links, notices) both send through it, so every message is signed, delivered,
 * tracked and suppressed the same way.
 */
export * from './service';
