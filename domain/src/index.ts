export * from './event';
export * from './decider';
export * from './errors';
export * from './messages';
export * from './suppressions';
export * from './validation';
export * from './accounts';
