/**
 * The domain: pure TypeScript, no I/O, no framework, no HTTP. Deciders (decider.ts) for messages, suppressions,
 * organizations and webhook calls; events and commands share event.ts's envelope; a broken rule is a DomainError with a code from
 * domainError.ts; validation/ turns a send request into an OutboundMessage; received/ records mail that came back
 * to our receiving server. Time and ids come in from the caller.
 */
export * from './domainError';
export * from './event';
export * from './decider';
export * from './messages';
export * from './suppressions';
export * from './validation';
export * from './accounts';
export * from './received';
export * from './returns';
export * from './webhookCalls';
export * from './templates';
export * from './inbound';
