/** Inbound mail: the inbound message (recorded, blocked, bypassed) and its decider. */
export * from './inboundMessage';
